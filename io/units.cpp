#include "io/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace mdsim {
namespace {

struct UnitEntry {
  std::string_view name;
  double to_md;  // multiply a value in this unit by to_md to get MD units
};

// Conversion factors to MD units. 1 kcal = 4.184 kJ; 1 atm = 1.01325 bar.
constexpr UnitEntry kLength[] = {{"nm", 1.0}, {"Å", 0.1}, {"A", 0.1}, {"angstrom", 0.1}, {"Angstrom", 0.1},
                                 {"pm", 1e-3}, {"um", 1e3}};
constexpr UnitEntry kTime[] = {{"ps", 1.0}, {"fs", 1e-3}, {"ns", 1e3}, {"us", 1e6}, {"µs", 1e6}, {"ms", 1e9}};
constexpr UnitEntry kTemperature[] = {{"K", 1.0}, {"kelvin", 1.0}};
constexpr UnitEntry kMass[] = {{"amu", 1.0}, {"Da", 1.0}, {"u", 1.0}, {"dalton", 1.0}, {"g/mol", 1.0}};
constexpr UnitEntry kPressure[] = {{"bar", 1.0}, {"atm", 1.01325}, {"Pa", 1e-5}, {"kPa", 1e-2}, {"MPa", 10.0},
                                   {"mbar", 1e-3}};
constexpr UnitEntry kFrequency[] = {{"1/ps", 1.0}, {"/ps", 1.0}, {"ps^-1", 1.0}, {"ps-1", 1.0},
                                    {"1/fs", 1e3}, {"/fs", 1e3}, {"fs^-1", 1e3}, {"1/ns", 1e-3},
                                    {"/ns", 1e-3}, {"ns^-1", 1e-3}};
constexpr UnitEntry kEnergy[] = {{"kJ/mol", 1.0}, {"kcal/mol", 4.184}, {"J/mol", 1e-3}};
constexpr UnitEntry kForce[] = {{"kJ/mol/nm", 1.0},  {"kJ/(mol*nm)", 1.0}, {"kJ/mol/Å", 10.0},
                                {"kJ/mol/A", 10.0},  {"kcal/mol/Å", 41.84}, {"kcal/mol/A", 41.84},
                                {"kcal/mol/nm", 4.184}};
// Salt concentrations (mdsim prepare): mol/L.
constexpr UnitEntry kConcentration[] = {{"M", 1.0}, {"mol/L", 1.0}, {"molar", 1.0}, {"mM", 1e-3}, {"mmol/L", 1e-3}};
// Spring constants: 1 kcal/mol/Å^2 = 4.184 kJ/mol / (0.1 nm)^2 = 418.4 kJ/mol/nm^2.
constexpr UnitEntry kForceConstant[] = {{"kJ/mol/nm^2", 1.0},      {"kJ/mol/nm2", 1.0},       {"kJ/(mol*nm^2)", 1.0},
                                        {"kJ/mol/Å^2", 100.0},     {"kJ/mol/A^2", 100.0},     {"kcal/mol/Å^2", 418.4},
                                        {"kcal/mol/A^2", 418.4},   {"kcal/mol/nm^2", 4.184}};

template <std::size_t N>
std::vector<UnitEntry> as_vector(const UnitEntry (&a)[N]) {
  return std::vector<UnitEntry>(a, a + N);
}

std::vector<UnitEntry> table(Dimension d) {
  switch (d) {
    case Dimension::Length: return as_vector(kLength);
    case Dimension::Time: return as_vector(kTime);
    case Dimension::Temperature: return as_vector(kTemperature);
    case Dimension::Mass: return as_vector(kMass);
    case Dimension::Pressure: return as_vector(kPressure);
    case Dimension::Frequency: return as_vector(kFrequency);
    case Dimension::Energy: return as_vector(kEnergy);
    case Dimension::Force: return as_vector(kForce);
    case Dimension::Concentration: return as_vector(kConcentration);
    case Dimension::ForceConstant: return as_vector(kForceConstant);
  }
  return {};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

const char* md_unit(Dimension d) {
  switch (d) {
    case Dimension::Length: return "nm";
    case Dimension::Time: return "ps";
    case Dimension::Temperature: return "K";
    case Dimension::Mass: return "amu";
    case Dimension::Pressure: return "bar";
    case Dimension::Frequency: return "1/ps";
    case Dimension::Energy: return "kJ/mol";
    case Dimension::Force: return "kJ/mol/nm";
    case Dimension::Concentration: return "M";
    case Dimension::ForceConstant: return "kJ/mol/nm^2";
  }
  return "";
}

const char* dimension_name(Dimension d) {
  switch (d) {
    case Dimension::Length: return "length";
    case Dimension::Time: return "time";
    case Dimension::Temperature: return "temperature";
    case Dimension::Mass: return "mass";
    case Dimension::Pressure: return "pressure";
    case Dimension::Frequency: return "frequency";
    case Dimension::Energy: return "energy";
    case Dimension::Force: return "force";
    case Dimension::Concentration: return "concentration";
    case Dimension::ForceConstant: return "force constant";
  }
  return "";
}

std::vector<std::string> accepted_units(Dimension d) {
  std::vector<std::string> out;
  for (const auto& e : table(d)) out.emplace_back(e.name);
  return out;
}

QuantityParse parse_quantity(std::string_view text, Dimension d) {
  QuantityParse result;
  const std::string_view s = trim(text);
  // Leading number (strtod accepts the forms YAML users write: 2, 2.0, 2e-3, .5).
  const std::string buf(s);
  char* end = nullptr;
  const double number = std::strtod(buf.c_str(), &end);
  if (end == buf.c_str()) {
    result.error = fmt::format("expected a number or a {} such as \"{}\", got \"{}\"", dimension_name(d),
                               d == Dimension::Frequency ? "1/ps" : fmt::format("1 {}", md_unit(d)), buf);
    return result;
  }
  if (!std::isfinite(number)) {
    result.error = fmt::format("expected a finite number, got \"{}\"", buf);
    return result;
  }
  std::string_view unit = trim(std::string_view(buf).substr(static_cast<std::size_t>(end - buf.c_str())));
  if (unit.empty()) {
    result.value = number;
    return result;
  }
  for (const auto& e : table(d)) {
    if (unit == e.name) {
      if (const double value = number * e.to_md; std::isfinite(value))
        result.value = value;
      else  // 1e308 um: finite as written, not once in nm
        result.error = fmt::format("'{}' is too large: it is not a finite number of {}", buf, md_unit(d));
      return result;
    }
  }
  std::string list;
  for (const auto& e : table(d)) list += (list.empty() ? "" : ", ") + std::string(e.name);
  result.error = fmt::format("unknown {} unit '{}' (accepted: {})", dimension_name(d), unit, list);
  return result;
}

}  // namespace mdsim
