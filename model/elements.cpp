#include "model/elements.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <string>

namespace mdsim {
namespace {

// Symbols, atomic numbers and masses of OpenMM 7.7's openmm.app.element (dumped from it with
// tests/data/pdb_openmm_elements.txt's recipe; tests/io/test_pdb.cpp compares every entry).
constexpr std::array kElements = {
    Element{"H", 1, 1.007947},
    Element{"D", 1, 2.0135532127},
    Element{"He", 2, 4.003},
    Element{"Li", 3, 6.9412},
    Element{"Be", 4, 9.0121823},
    Element{"B", 5, 10.8117},
    Element{"C", 6, 12.01078},
    Element{"N", 7, 14.00672},
    Element{"O", 8, 15.99943},
    Element{"F", 9, 18.99840325},
    Element{"Ne", 10, 20.17976},
    Element{"Na", 11, 22.989769282},
    Element{"Mg", 12, 24.30506},
    Element{"Al", 13, 26.98153868},
    Element{"Si", 14, 28.08553},
    Element{"P", 15, 30.9737622},
    Element{"S", 16, 32.0655},
    Element{"Cl", 17, 35.4532},
    Element{"Ar", 18, 39.9481},
    Element{"K", 19, 39.09831},
    Element{"Ca", 20, 40.0784},
    Element{"Sc", 21, 44.9559126},
    Element{"Ti", 22, 47.8671},
    Element{"V", 23, 50.94151},
    Element{"Cr", 24, 51.99616},
    Element{"Mn", 25, 54.9380455},
    Element{"Fe", 26, 55.8452},
    Element{"Co", 27, 58.9331955},
    Element{"Ni", 28, 58.69342},
    Element{"Cu", 29, 63.5463},
    Element{"Zn", 30, 65.4094},
    Element{"Ga", 31, 69.7231},
    Element{"Ge", 32, 72.641},
    Element{"As", 33, 74.921602},
    Element{"Se", 34, 78.963},
    Element{"Br", 35, 79.9041},
    Element{"Kr", 36, 83.7982},
    Element{"Rb", 37, 85.46783},
    Element{"Sr", 38, 87.621},
    Element{"Y", 39, 88.905852},
    Element{"Zr", 40, 91.2242},
    Element{"Nb", 41, 92.906382},
    Element{"Mo", 42, 95.942},
    Element{"Tc", 43, 98.0},
    Element{"Ru", 44, 101.072},
    Element{"Rh", 45, 102.905502},
    Element{"Pd", 46, 106.421},
    Element{"Ag", 47, 107.86822},
    Element{"Cd", 48, 112.4118},
    Element{"In", 49, 114.8183},
    Element{"Sn", 50, 118.7107},
    Element{"Sb", 51, 121.7601},
    Element{"Te", 52, 127.603},
    Element{"I", 53, 126.904473},
    Element{"Xe", 54, 131.2936},
    Element{"Cs", 55, 132.90545192},
    Element{"Ba", 56, 137.3277},
    Element{"La", 57, 138.905477},
    Element{"Ce", 58, 140.1161},
    Element{"Pr", 59, 140.907652},
    Element{"Nd", 60, 144.2423},
    Element{"Pm", 61, 145.0},
    Element{"Sm", 62, 150.362},
    Element{"Eu", 63, 151.9641},
    Element{"Gd", 64, 157.253},
    Element{"Tb", 65, 158.925352},
    Element{"Dy", 66, 162.5001},
    Element{"Ho", 67, 164.930322},
    Element{"Er", 68, 167.2593},
    Element{"Tm", 69, 168.934212},
    Element{"Yb", 70, 173.043},
    Element{"Lu", 71, 174.9671},
    Element{"Hf", 72, 178.492},
    Element{"Ta", 73, 180.947882},
    Element{"W", 74, 183.841},
    Element{"Re", 75, 186.2071},
    Element{"Os", 76, 190.233},
    Element{"Ir", 77, 192.2173},
    Element{"Pt", 78, 195.0849},
    Element{"Au", 79, 196.9665694},
    Element{"Hg", 80, 200.592},
    Element{"Tl", 81, 204.38332},
    Element{"Pb", 82, 207.21},
    Element{"Bi", 83, 208.980401},
    Element{"Po", 84, 209.0},
    Element{"At", 85, 210.0},
    Element{"Rn", 86, 222.018},
    Element{"Fr", 87, 223.0},
    Element{"Ra", 88, 226.0},
    Element{"Ac", 89, 227.0},
    Element{"Th", 90, 232.038062},
    Element{"Pa", 91, 231.035882},
    Element{"U", 92, 238.028913},
    Element{"Np", 93, 237.0},
    Element{"Pu", 94, 244.0},
    Element{"Am", 95, 243.0},
    Element{"Cm", 96, 247.0},
    Element{"Bk", 97, 247.0},
    Element{"Cf", 98, 251.0},
    Element{"Es", 99, 252.0},
    Element{"Fm", 100, 257.0},
    Element{"Md", 101, 258.0},
    Element{"No", 102, 259.0},
    Element{"Lr", 103, 262.0},
    Element{"Rf", 104, 261.0},
    Element{"Db", 105, 262.0},
    Element{"Sg", 106, 266.0},
    Element{"Bh", 107, 264.0},
    Element{"Hs", 108, 269.0},
    Element{"Mt", 109, 268.0},
    Element{"Ds", 110, 281.0},
    Element{"Rg", 111, 272.0},
    Element{"Uub", 112, 285.0},
    Element{"Uut", 113, 284.0},
    Element{"Uuq", 114, 289.0},
    Element{"Uup", 115, 288.0},
    Element{"Uuh", 116, 292.0},
};

char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

const Element* find_element(std::string_view symbol) {
  while (!symbol.empty() && is_blank(symbol.front())) symbol.remove_prefix(1);
  while (!symbol.empty() && is_blank(symbol.back())) symbol.remove_suffix(1);
  if (symbol.empty() || symbol.size() > 3) return nullptr;
  for (const Element& e : kElements) {
    std::size_t i = 0;
    for (; i < symbol.size(); ++i) {
      if (e.symbol[i] == '\0' || ascii_upper(e.symbol[i]) != ascii_upper(symbol[i])) break;
    }
    if (i == symbol.size() && e.symbol[i] == '\0') return &e;
  }
  return nullptr;
}

const Element* element_by_mass(double mass_amu) {
  if (!(mass_amu > 0.0)) return nullptr;
  if (mass_amu < 2.5) return &kElements[0];
  const Element* best = nullptr;
  for (const Element& e : kElements) {
    if (e.atomic_number > 110 || std::string_view(e.symbol) == "D") continue;
    if (best == nullptr || std::abs(e.mass_amu - mass_amu) < std::abs(best->mass_amu - mass_amu)) best = &e;
  }
  return best;
}

const Element* element_by_atomic_number(int atomic_number) {
  for (const Element& e : kElements)
    if (e.atomic_number == atomic_number && std::string_view(e.symbol) != "D") return &e;
  return nullptr;
}

std::string normalise_element_symbol(std::string_view symbol) {
  std::string s;
  for (char c : symbol)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<char>(i == 0 ? std::toupper(static_cast<unsigned char>(s[i]))
                                    : std::tolower(static_cast<unsigned char>(s[i])));
  return s;
}

}  // namespace mdsim
