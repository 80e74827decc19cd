// Solvent and ions as OpenMM 7.7's Modeller.addSolvent and Modeller._addIons (box shapes as OpenMM 8's
// _computeBoxVectors); see solvent.hpp. The water positions, the overlap rules and the ion counts follow
// Modeller's arithmetic step by step so that the same solute gives the same waters.
#include "prepare/solvent.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "io/pdb_reader.hpp"
#include "model/elements.hpp"
#include "prepare/data_files.hpp"

namespace mdsim {

namespace {

// Modeller's van der Waals radius per sigma (2^(1/6) / 2: half the LJ minimum distance).
constexpr double kVdwRadiusPerSigma = 0.5612310241546864907;

// The water models with a bundled box (data/<name>.pdb) and the oxygen sigma Modeller.addSolvent takes for each.
struct WaterModel {
  const char* name;
  double sigma_nm;
};
constexpr WaterModel kWaterModels[] = {{"tip3p", 0.31507524065751241}, {"tip4pew", 0.315365}};

const WaterModel* find_water_model(const std::string& name) {
  for (const WaterModel& m : kWaterModels)
    if (name == m.name) return &m;
  return nullptr;
}
constexpr double kWaterMolarity = 55.4;  // pure water, mol/L, as Modeller takes it

std::string nm(double value) { return fmt::format("{:.4g}", value); }

// Points sorted into a grid of cells at least `cutoff` high, so that every point within `cutoff` of a query
// point (by minimum image when periodic) lies in one of the 27 cells around the query's cell. Periodic: the
// grid divides the box's fractional coordinates (cells are parallelepipeds) and wraps. Not periodic: an
// axis-aligned grid over the points' bounding box.
class CellGrid {
 public:
  CellGrid(const std::vector<Vec3d>& points, const std::optional<Boxd>& box, double cutoff)
      : points_(points), box_(box) {
    constexpr int kMaxCells = 200;  // per axis; larger cells stay correct, only slower
    if (box_) {
      reciprocal_box_vectors(*box_, recip_);
      for (int d = 0; d < 3; ++d) {
        // The cell's height along axis d is the box's height over n: 1 / |fractional-coordinate gradient|.
        const Vec3d gradient(recip_[0][d], recip_[1][d], recip_[2][d]);
        const double height = 1.0 / norm(gradient);
        n_[d] = std::clamp(static_cast<int>(std::floor(height / cutoff)), 1, kMaxCells);
      }
    } else {
      lower_ = Vec3d(0, 0, 0);
      Vec3d upper(0, 0, 0);
      if (!points_.empty()) {
        lower_ = upper = points_[0];
        for (const Vec3d& p : points_)
          for (int d = 0; d < 3; ++d) lower_[d] = std::min(lower_[d], p[d]), upper[d] = std::max(upper[d], p[d]);
      }
      for (int d = 0; d < 3; ++d) {
        size_[d] = std::max(cutoff, (upper[d] - lower_[d]) / kMaxCells);
        n_[d] = static_cast<int>(std::floor((upper[d] - lower_[d]) / size_[d])) + 1;
      }
    }
    const std::size_t cells = static_cast<std::size_t>(n_[0]) * static_cast<std::size_t>(n_[1]) * static_cast<std::size_t>(n_[2]);
    start_.assign(cells + 1, 0);
    std::vector<std::size_t> cell_of(points_.size());
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const auto c = cell_index(points_[i]);
      cell_of[i] = flat(c[0], c[1], c[2]);
      ++start_[cell_of[i] + 1];
    }
    for (std::size_t c = 0; c < cells; ++c) start_[c + 1] += start_[c];
    sorted_.resize(points_.size());
    std::vector<std::size_t> fill(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < points_.size(); ++i) sorted_[fill[cell_of[i]]++] = static_cast<int>(i);
  }

  // The displacement b - a, by minimum image when periodic.
  Vec3d delta(const Vec3d& a, const Vec3d& b) const { return box_ ? box_->minimum_image(b - a) : b - a; }

  // Calls f(index) for every point in the cells around p (each point once).
  template <typename F>
  void for_each_near(const Vec3d& p, F&& f) const {
    const auto c = cell_index(p);
    int around[3][3];  // the distinct cell indices along each axis (fewer than 3 when the grid is small)
    int count[3] = {0, 0, 0};
    for (int d = 0; d < 3; ++d) {
      for (int o = -1; o <= 1; ++o) {
        int i = c[d] + o;
        if (box_) {
          i = ((i % n_[d]) + n_[d]) % n_[d];
        } else if (i < 0 || i >= n_[d]) {
          continue;
        }
        bool seen = false;
        for (int k = 0; k < count[d]; ++k) seen = seen || around[d][k] == i;
        if (!seen) around[d][count[d]++] = i;
      }
    }
    for (int ix = 0; ix < count[0]; ++ix)
      for (int iy = 0; iy < count[1]; ++iy)
        for (int iz = 0; iz < count[2]; ++iz) {
          const std::size_t cell = flat(around[0][ix], around[1][iy], around[2][iz]);
          for (std::size_t k = start_[cell]; k < start_[cell + 1]; ++k) f(sorted_[k]);
        }
  }

 private:
  std::array<int, 3> cell_index(const Vec3d& p) const {
    std::array<int, 3> c{};
    for (int d = 0; d < 3; ++d) {
      if (box_) {
        const double s = p.x * recip_[0][d] + p.y * recip_[1][d] + p.z * recip_[2][d];
        const double wrapped = s - std::floor(s);
        c[d] = std::min(static_cast<int>(wrapped * n_[d]), n_[d] - 1);
      } else {
        // Query points outside the grid map to a cell beyond it (no neighbours there, or only its edge).
        const double t = std::floor((p[d] - lower_[d]) / size_[d]);
        c[d] = static_cast<int>(std::clamp(t, -2.0, static_cast<double>(n_[d]) + 1.0));
      }
    }
    return c;
  }
  std::size_t flat(int x, int y, int z) const {
    return (static_cast<std::size_t>(x) * static_cast<std::size_t>(n_[1]) + static_cast<std::size_t>(y)) *
               static_cast<std::size_t>(n_[2]) +
           static_cast<std::size_t>(z);
  }

  const std::vector<Vec3d>& points_;
  std::optional<Boxd> box_;
  Vec3d recip_[3];
  Vec3d lower_, size_;
  std::array<int, 3> n_{1, 1, 1};
  std::vector<std::size_t> start_;
  std::vector<int> sorted_;
};

// The shortest non-zero lattice vector of a reduced box (small combinations suffice in the reduced form).
double minimum_image_distance(const Boxd& box) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j)
      for (int k = -2; k <= 2; ++k)
        if (i != 0 || j != 0 || k != 0)
          best = std::min(best, norm(box.a * double(i) + box.b * double(j) + box.c * double(k)));
  return best;
}

// The smallest distance between a solute atom and a periodic image of the solute (any non-zero lattice
// shift), or `limit` when none is closer than that.
double solute_image_distance(const std::vector<Vec3d>& positions, const Boxd& box, double limit) {
  if (positions.empty()) return limit;
  const CellGrid grid(positions, std::nullopt, limit);
  Vec3d lower = positions[0], upper = positions[0];
  for (const Vec3d& p : positions)
    for (int d = 0; d < 3; ++d) lower[d] = std::min(lower[d], p[d]), upper[d] = std::max(upper[d], p[d]);
  const double reach = norm(upper - lower) + limit;  // a longer shift cannot bring an image within limit
  double best = limit;
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j)
      for (int k = 0; k <= 2; ++k) {
        // Shifts L and -L give the same distances: take those whose last non-zero coefficient is positive.
        if (k == 0 && (j < 0 || (j == 0 && i <= 0))) continue;
        const Vec3d shift = box.a * double(i) + box.b * double(j) + box.c * double(k);
        if (norm(shift) >= reach) continue;
        for (const Vec3d& p : positions) {
          const Vec3d image = p + shift;
          grid.for_each_near(image, [&](int n) { best = std::min(best, norm(image - positions[static_cast<std::size_t>(n)])); });
        }
      }
  return best;
}

// The smallest diagonal element relative to the width for a shape (the engine needs cutoff <= half of it).
double smallest_height_per_width(BoxShape shape) {
  switch (shape) {
    case BoxShape::Cube: return 1.0;
    case BoxShape::Dodecahedron: return std::sqrt(0.5);
    case BoxShape::Octahedron: return std::sqrt(6.0) / 3.0;
  }
  return 1.0;
}

// The first one-character chain ID the topology does not use ("" when all are taken: the PDB writer then
// makes one up).
std::string unused_chain_id(const Topology& top) {
  std::set<std::string> used;
  for (const auto& chain : top.chains) used.insert(chain.id);
  for (const char* ids : {"ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789"})
    for (const char* c = ids; *c != '\0'; ++c)
      if (used.count(std::string(1, *c)) == 0) return std::string(1, *c);
  return "";
}

void check_positions(const Topology& top, const char* what) {
  if (top.positions_nm.size() != top.atoms.size())
    throw InputError(fmt::format("{}: the structure has {} atoms but {} positions", what, top.atoms.size(),
                                 top.positions_nm.size()));
  for (std::size_t i = 0; i < top.positions_nm.size(); ++i) {
    const Vec3d& p = top.positions_nm[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      throw InputError(located(top.source, top.atoms[i].line, 0,
                               fmt::format("{}: atom {} has a non-finite position", what, top.atoms[i].name)));
  }
}

// One water of the bundled box: its atoms (name, element) and positions, the oxygen first in Modeller's
// sense (the first oxygen atom of the residue).
struct BoxWater {
  std::vector<int> atoms;  // indices into the box topology, file order
  int oxygen = -1;
};

struct IonKind {
  const char* option;   // as the user writes it
  const char* residue;  // residue and atom names of amber14's tip3p.xml template
  const char* atom;
  const char* element;  // element symbol
};

constexpr IonKind kPositiveIons[] = {{"Na+", "NA", "NA", "Na"}, {"K+", "K", "K", "K"}, {"Li+", "LI", "LI", "Li"},
                                     {"Rb+", "RB", "RB", "Rb"}, {"Cs+", "CS", "CS", "Cs"}};
constexpr IonKind kNegativeIons[] = {
    {"Cl-", "CL", "CL", "Cl"}, {"Br-", "BR", "BR", "Br"}, {"F-", "F", "F", "F"}, {"I-", "IOD", "I", "I"}};

template <std::size_t N>
const IonKind& find_ion(const IonKind (&kinds)[N], const std::string& option, const char* which) {
  for (const IonKind& kind : kinds)
    if (option == kind.option) return kind;
  std::string known;
  for (const IonKind& kind : kinds) known += (known.empty() ? "" : ", ") + std::string(kind.option);
  throw InputError(fmt::format("ions: unknown {} ion '{}'; expected one of {}", which, option, known));
}

// A uniform index in [0, n) from the generator, by rejection (Lemire's threshold), so the draw is the same
// with every standard library (std::uniform_int_distribution's is not specified).
std::size_t uniform_index(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = n;
  const std::uint64_t threshold = (0 - range) % range;  // 2^64 mod range: values below it are rejected
  std::uint64_t x = rng();
  while (x < threshold) x = rng();
  return static_cast<std::size_t>(x % range);
}

}  // namespace

Boxd shaped_box(BoxShape shape, double width_nm) {
  const double w = width_nm;
  Boxd box;
  switch (shape) {
    case BoxShape::Cube:
      box.a = {w, 0, 0}, box.b = {0, w, 0}, box.c = {0, 0, w};
      break;
    case BoxShape::Dodecahedron:  // rhombic dodecahedron, square xy face (OpenMM 8)
      box.a = {w, 0, 0}, box.b = {0, w, 0}, box.c = {0.5 * w, 0.5 * w, std::sqrt(0.5) * w};
      break;
    case BoxShape::Octahedron: {  // truncated octahedron (OpenMM 8)
      const double by = 2.0 * std::sqrt(2.0) / 3.0 * w;
      // cy = by / 2 exactly (sqrt(2)/3 w), so the reduced-form bound |cy| <= by/2 holds without rounding.
      box.a = {w, 0, 0}, box.b = {w / 3.0, by, 0}, box.c = {-w / 3.0, 0.5 * by, std::sqrt(6.0) / 3.0 * w};
      break;
    }
  }
  return box;
}

int rounded_total_charge(const System& system) {
  double total = 0;
  for (double q : system.charge_e) total += q;
  return static_cast<int>(std::floor(0.5 + total));
}

namespace {

// The stages of add_solvent.

void check_solvent_inputs(const Topology& solute, const System& solute_system, const SolventOptions& options) {
  check_positions(solute, "solvent");
  if (solute_system.num_particles() != solute.num_atoms() ||
      solute_system.sigma_nm.size() != solute.atoms.size() || solute_system.epsilon_kj_per_mol.size() != solute.atoms.size())
    throw InputError(fmt::format("solvent: the system has {} particles but the structure {} atoms; build the system "
                                 "from this structure",
                                 solute_system.num_particles(), solute.num_atoms()));
  if (find_water_model(options.water_model) == nullptr)
    throw InputError(fmt::format("solvent: unknown water model '{}'; the bundled water boxes are tip3p and tip4pew",
                                 options.water_model));
  if (!(options.cutoff_nm > 0) || !std::isfinite(options.cutoff_nm))
    throw InputError(fmt::format("solvent: the cutoff must be positive (got {} nm)", nm(options.cutoff_nm)));
}

// A water of the bundled box placed in the new box: which one, and where its oxygen lands.
struct PlacedWater {
  int water;  // index into WaterBox::waters
  Vec3d oxygen;
};

// The bundled pre-equilibrated box: its structure, its rectangular edges (the tile) and its waters.
struct WaterBox {
  Topology top;
  Vec3d tile;
  std::vector<BoxWater> waters;

  // The positions of a placed water's atoms, file order: the box's water moved with its oxygen.
  std::vector<Vec3d> atom_positions(const PlacedWater& p) const {
    const BoxWater& w = waters[static_cast<std::size_t>(p.water)];
    const Vec3d& box_oxygen = top.positions_nm[static_cast<std::size_t>(w.oxygen)];
    std::vector<Vec3d> atoms;
    for (int a : w.atoms) atoms.push_back(p.oxygen + top.positions_nm[static_cast<std::size_t>(a)] - box_oxygen);
    return atoms;
  }
};

// The box file's text with every atom that is neither an oxygen nor a hydrogen by name (a 4-site box's M,
// element columns blank as OpenMM writes it) marked an extra particle ("EP" in columns 77-78).
std::string with_extra_particles_marked(std::istream& in) {
  std::string text, line;
  while (std::getline(in, line)) {
    const bool atom = line.rfind("ATOM", 0) == 0 || line.rfind("HETATM", 0) == 0;
    if (atom && line.size() >= 16) {
      const std::string name = line.substr(12, 4);
      const std::size_t first = name.find_first_not_of(' ');
      const char c = first == std::string::npos ? ' ' : name[first];
      const bool blank_element = line.size() < 78 || line.substr(76, 2) == "  ";
      if (blank_element && c != 'O' && c != 'H') {
        line.resize(76, ' ');
        line += "EP";
      }
    }
    text += line + "\n";
  }
  return text;
}

WaterBox load_water_box(const std::string& water_model) {
  const std::string box_path = find_data_file(water_model + ".pdb");
  WaterBox water_box;
  std::ifstream in(box_path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the bundled water box; reinstall mdsim", box_path));
  water_box.top = read_pdb_text(with_extra_particles_marked(in), box_path);
  const Topology& top = water_box.top;
  if (!top.box || top.box->triclinic())
    throw InputError(located(box_path, 0, 0, "the water box needs a rectangular CRYST1 record"));
  water_box.tile = Vec3d(top.box->a.x, top.box->b.y, top.box->c.z);
  for (const auto& residue : top.residues) {
    BoxWater w;
    // O and H only: extra particles are added from the force field's virtual sites (add_water_extra_particles).
    for (int a : residue.atoms)
      if (!top.atoms[static_cast<std::size_t>(a)].element.empty()) w.atoms.push_back(a);
    for (int a : residue.atoms)
      if (top.atoms[static_cast<std::size_t>(a)].element == "O") {
        w.oxygen = a;
        break;
      }
    if (w.oxygen < 0) throw InputError(located(box_path, residue.line, 0, "water residue without an oxygen atom"));
    water_box.waters.push_back(std::move(w));
  }
  return water_box;
}

// The solute's bounding box, its largest edge and its centre (the middle of the bounding box), as Modeller.
struct SoluteExtent {
  Vec3d lower, upper, center;
  double max_size = 0;
};

SoluteExtent solute_extent(const std::vector<Vec3d>& positions) {
  SoluteExtent s;
  if (!positions.empty()) {
    s.lower = s.upper = positions[0];
    for (const Vec3d& p : positions)
      for (int d = 0; d < 3; ++d) s.lower[d] = std::min(s.lower[d], p[d]), s.upper[d] = std::max(s.upper[d], p[d]);
    for (int d = 0; d < 3; ++d) {
      s.max_size = std::max(s.max_size, s.upper[d] - s.lower[d]);
      s.center[d] = (s.upper[d] + s.lower[d]) / 2;
    }
  }
  return s;
}

struct ChosenBox {
  Boxd box;
  double width = 0;
  bool enlarged = false;  // widened to keep the solute `padding` from its images
};

// The user's rectangular box, which must hold the solute.
ChosenBox explicit_box(const std::array<double, 3>& e, const SoluteExtent& solute) {
  for (int d = 0; d < 3; ++d) {
    if (!(e[static_cast<std::size_t>(d)] > 0) || !std::isfinite(e[static_cast<std::size_t>(d)]))
      throw InputError(fmt::format("solvent: box edges must be positive (got {} {} {} nm)", nm(e[0]), nm(e[1]), nm(e[2])));
    if (solute.upper[d] - solute.lower[d] > e[static_cast<std::size_t>(d)])
      throw InputError(fmt::format(
          "solvent: the solute spans {} nm along {} but the box edge is {} nm; give a box larger than the solute "
          "(by twice the padding you want) or use padding instead",
          nm(solute.upper[d] - solute.lower[d]), "xyz"[d], nm(e[static_cast<std::size_t>(d)])));
  }
  ChosenBox chosen;
  chosen.box.a = {e[0], 0, 0}, chosen.box.b = {0, e[1], 0}, chosen.box.c = {0, 0, e[2]};
  chosen.width = std::min({e[0], e[1], e[2]});
  return chosen;
}

// The shaped box of width max_size + 2 * padding, widened where the shape needs it.
ChosenBox padded_box(const std::vector<Vec3d>& positions, double max_size, const SolventOptions& options) {
  if (!(options.padding_nm > 0) || !std::isfinite(options.padding_nm))
    throw InputError(fmt::format("solvent: padding must be positive (got {} nm); 1.0 nm is usual", nm(options.padding_nm)));
  ChosenBox chosen;
  chosen.width = max_size + 2 * options.padding_nm;
  chosen.box = shaped_box(options.shape, chosen.width);
  if (options.shape != BoxShape::Cube) {
    // The cube's width keeps every solute atom 2 * padding from the solute's images (their bounding boxes
    // are that far apart along an axis); a dodecahedron or octahedron of the same width may bring an
    // elongated solute closer along its slanted lattice vectors. Widen it (by the shortfall each time) until
    // the solute keeps at least `padding` from its images, OpenMM 8's guarantee for these shapes; at the
    // latest the width reaches the solute's bounding-sphere diameter + padding, which guarantees it.
    const double wanted = options.padding_nm;
    for (double d = solute_image_distance(positions, chosen.box, wanted); d < wanted * (1 - 1e-9);
         d = solute_image_distance(positions, chosen.box, wanted)) {
      chosen.width += std::max(wanted - d, 0.01);
      chosen.box = shaped_box(options.shape, chosen.width);
      chosen.enlarged = true;
    }
  }
  return chosen;
}

// The largest system prepare builds: about 17 copies of the largest benchmark (4x4x4 DHFR, 1.5 M atoms).
constexpr double kMaxPreparedAtoms = 25e6;

// Refuses, before any water is placed, a box whose water alone would pass kMaxPreparedAtoms, with the numbers.
void check_solvated_size(const Boxd& box, int solute_atoms, const SolventOptions& options) {
  const double volume_nm3 = box.a.x * box.b.y * box.c.z;  // reduced triclinic: the diagonal's product
  const double waters = volume_nm3 * kWaterMolarity * 6.02214076e23 * 1e-24;  // mol/L -> molecules per nm^3
  const double atoms = solute_atoms + 3.0 * waters;
  if (!(atoms <= kMaxPreparedAtoms))
    throw InputError(fmt::format(
        "solvent: the box ({:.4g} x {:.4g} x {:.4g} nm, {:.4g} nm^3) would hold about {:.3g} waters, {:.3g} atoms in "
        "all, more than the {:.0f} million atoms mdsim prepare builds; {}",
        box.a.x, box.b.y, box.c.z, volume_nm3, waters, atoms, kMaxPreparedAtoms / 1e6,
        options.box_nm ? "give smaller box edges (nm)" : "give a smaller padding (1.0 nm is usual)"));
}

// The box must hold the cutoff: no particle may see two images of another (minimum image distance at least
// twice the cutoff), and the engine (as OpenMM) needs the cutoff at most half the smallest height (a diagonal
// element).
void check_box_holds_cutoff(const Boxd& box, const SolventOptions& options, double max_size) {
  const double min_image = minimum_image_distance(box);
  const double min_height = box.smallest_height();
  if (min_image < 2 * options.cutoff_nm || min_height < 2 * options.cutoff_nm) {
    std::string fix;
    if (options.box_nm) {
      fix = fmt::format("give box edges of at least {} nm", nm(2 * options.cutoff_nm));
    } else {
      const double needed = 2 * options.cutoff_nm / smallest_height_per_width(options.shape);
      fix = fmt::format("increase padding to at least {} nm", nm(std::ceil((needed - max_size) / 2 * 1000) / 1000));
    }
    throw InputError(fmt::format(
        "solvent: the {} box is too small for the cutoff {} nm (minimum image distance {} nm, smallest box height "
        "{} nm; both must be at least twice the cutoff); {}",
        options.box_nm ? "rectangular" : to_string(options.shape), nm(options.cutoff_nm), nm(min_image),
        nm(min_height), fix));
  }
}

// What the water stages share: the water box, the periodic box, and the brick the water box is tiled over,
// the box's rectangular brick [0, a.x] x [0, b.y] x [0, c.z] (for a reduced box a region that holds one copy of
// every point of the periodic system) moved to be centred on the solute.
struct Solvation {
  const WaterBox& water_box;
  const Boxd& box;
  Vec3d center;  // of the brick
  Vec3d extent;  // of the brick
  double water_radius;

  // Whether p lies within `skin` of a lower face of the brick.
  bool near_lower_face(const Vec3d& p, double skin) const {
    bool near = false;
    for (int d = 0; d < 3; ++d) near = near || p[d] < center[d] - extent[d] / 2 + skin;
    return near;
  }
  // Whether p lies within `skin` of an upper face of the brick (or beyond it).
  bool near_upper_face(const Vec3d& p, double skin) const {
    bool near = false;
    for (int d = 0; d < 3; ++d) near = near || !(p[d] < center[d] + extent[d] / 2 - skin);
    return near;
  }

  std::vector<PlacedWater> tile(const std::vector<Vec3d>& positions, const System& solute_system,
                                int& near_solute) const;
  std::vector<PlacedWater> without_boundary_clashes(const std::vector<PlacedWater>& placed) const;
  int drop_atom_clashes(std::vector<PlacedWater>& kept) const;
};

// Tile the water box over the brick and keep the waters whose oxygen lies in it and overlaps no solute atom
// (counted in near_solute).
std::vector<PlacedWater> Solvation::tile(const std::vector<Vec3d>& positions, const System& solute_system,
                                         int& near_solute) const {
  // Each solute atom's overlap distance with a water oxygen: the sum of their radii.
  std::vector<double> overlap(positions.size(), water_radius);
  double max_overlap = water_radius;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (solute_system.epsilon_kj_per_mol[i] != 0) overlap[i] += solute_system.sigma_nm[i] * kVdwRadiusPerSigma;
    max_overlap = std::max(max_overlap, overlap[i]);
  }
  const CellGrid solute_grid(positions, box, max_overlap);

  const Vec3d& tile_edges = water_box.tile;
  Vec3d shift;
  for (int d = 0; d < 3; ++d) shift[d] = center[d] - extent[d] / 2;
  std::array<int, 3> tiles{};
  for (int d = 0; d < 3; ++d)
    tiles[static_cast<std::size_t>(d)] = static_cast<int>(std::ceil(extent[d] / tile_edges[d]));
  std::vector<PlacedWater> placed;
  for (int tx = 0; tx < tiles[0]; ++tx)
    for (int ty = 0; ty < tiles[1]; ++ty)
      for (int tz = 0; tz < tiles[2]; ++tz) {
        const Vec3d offset(tx * tile_edges.x, ty * tile_edges.y, tz * tile_edges.z);
        for (std::size_t w = 0; w < water_box.waters.size(); ++w) {
          Vec3d o = water_box.top.positions_nm[static_cast<std::size_t>(water_box.waters[w].oxygen)] + offset;
          if (o.x > extent.x || o.y > extent.y || o.z > extent.z) continue;
          o += shift;
          bool clash = false;
          solute_grid.for_each_near(o, [&](int i) {
            if (!clash && norm2(solute_grid.delta(o, positions[static_cast<std::size_t>(i)])) <
                              overlap[static_cast<std::size_t>(i)] * overlap[static_cast<std::size_t>(i)])
              clash = true;
          });
          if (clash) {
            ++near_solute;
            continue;
          }
          placed.push_back({static_cast<int>(w), o});
        }
      }
  return placed;
}

// Waters that clash with another across the periodic boundary: a water within the water radius of an upper
// face of the brick is dropped when a water near a lower face lies within the water radius of it by
// periodic distance but not directly (Modeller's rule; every face-crossing pair has one of each).
std::vector<PlacedWater> Solvation::without_boundary_clashes(const std::vector<PlacedWater>& placed) const {
  std::vector<Vec3d> lower_skin;
  for (const PlacedWater& p : placed)
    if (near_lower_face(p.oxygen, water_radius)) lower_skin.push_back(p.oxygen);
  const CellGrid skin_grid(lower_skin, box, water_radius);
  std::vector<PlacedWater> kept;
  kept.reserve(placed.size());
  for (const PlacedWater& p : placed) {
    bool clash = false;
    if (near_upper_face(p.oxygen, water_radius)) {
      skin_grid.for_each_near(p.oxygen, [&](int i) {
        const Vec3d& q = lower_skin[static_cast<std::size_t>(i)];
        if (!clash && norm2(skin_grid.delta(q, p.oxygen)) < water_radius * water_radius &&
            norm2(p.oxygen - q) > water_radius * water_radius)
          clash = true;
      });
    }
    if (!clash) kept.push_back(p);
  }
  return kept;
}

// Modeller's rule looks at oxygens only, so it keeps face-crossing pairs whose hydrogens nearly coincide,
// which the engine refuses as overlapping atoms. An addition to Modeller: a water near an upper face with any
// atom closer than kBoundaryAtomClashNm (twice the engine's overlap distance, far below any contact in liquid
// water) to an atom of a water across the face is dropped too. Returns how many were dropped.
int Solvation::drop_atom_clashes(std::vector<PlacedWater>& kept) const {
  constexpr double kBoundaryAtomClashNm = 0.1;
  constexpr double kWaterReachNm = 0.1;  // oxygen to its farthest atom, with room (TIP3P, TIP4P-Ew O-H 0.09572 nm)
  const double skin = kBoundaryAtomClashNm + 2 * kWaterReachNm;
  std::vector<int> lower_atoms_of;  // kept waters near a lower face, by index into kept
  std::vector<Vec3d> lower_oxygens;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (!near_lower_face(kept[k].oxygen, skin)) continue;
    lower_atoms_of.push_back(static_cast<int>(k));
    lower_oxygens.push_back(kept[k].oxygen);
  }
  const CellGrid lower_grid(lower_oxygens, box, skin);
  std::vector<char> dropped(kept.size(), 0);
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const PlacedWater& p = kept[k];
    if (!near_upper_face(p.oxygen, skin)) continue;
    const std::vector<Vec3d> mine = water_box.atom_positions(p);
    lower_grid.for_each_near(p.oxygen, [&](int i) {
      const int other = lower_atoms_of[static_cast<std::size_t>(i)];
      if (dropped[k] || dropped[static_cast<std::size_t>(other)] || static_cast<std::size_t>(other) == k) return;
      const Vec3d& q = lower_oxygens[static_cast<std::size_t>(i)];
      if (norm2(p.oxygen - q) <= norm2(lower_grid.delta(q, p.oxygen)) + 1e-12) return;  // not across a face
      for (const Vec3d& a : water_box.atom_positions(kept[static_cast<std::size_t>(other)]))
        for (const Vec3d& b : mine)
          if (norm2(lower_grid.delta(a, b)) < kBoundaryAtomClashNm * kBoundaryAtomClashNm) dropped[k] = 1;
    });
  }
  const int atom_clashes = static_cast<int>(std::count(dropped.begin(), dropped.end(), 1));
  if (atom_clashes > 0) {
    std::vector<PlacedWater> remaining;
    for (std::size_t k = 0; k < kept.size(); ++k)
      if (!dropped[k]) remaining.push_back(kept[k]);
    kept.swap(remaining);
  }
  return atom_clashes;
}

// The result: the solute as it is, then a chain of waters (HOH; bonds O-H).
Topology with_water_chain(const Topology& solute, const Boxd& box, const WaterBox& water_box,
                          const std::vector<PlacedWater>& kept) {
  Topology out = solute;
  out.box = box;
  TopologyChain chain;
  chain.id = unused_chain_id(solute);
  const int chain_index = static_cast<int>(out.chains.size());
  out.atoms.reserve(out.atoms.size() + 3 * kept.size());
  out.positions_nm.reserve(out.atoms.size() + 3 * kept.size());
  int number = 0;
  for (const PlacedWater& p : kept) {
    const BoxWater& w = water_box.waters[static_cast<std::size_t>(p.water)];
    TopologyResidue residue;
    residue.name = "HOH";
    residue.chain = chain_index;
    residue.number = ++number;
    const int residue_index = static_cast<int>(out.residues.size());
    const Vec3d& box_oxygen = water_box.top.positions_nm[static_cast<std::size_t>(w.oxygen)];
    int oxygen = -1;
    std::vector<int> hydrogens;
    for (int a : w.atoms) {
      const TopologyAtom& src = water_box.top.atoms[static_cast<std::size_t>(a)];
      TopologyAtom atom;
      atom.name = src.name;
      atom.element = src.element;
      atom.residue = residue_index;
      atom.serial = out.num_atoms() + 1;
      const int index = out.num_atoms();
      out.atoms.push_back(atom);
      // Modeller's order of operations.
      out.positions_nm.push_back(p.oxygen + water_box.top.positions_nm[static_cast<std::size_t>(a)] - box_oxygen);
      residue.atoms.push_back(index);
      if (a == w.oxygen) oxygen = index;
      if (src.element == "H") hydrogens.push_back(index);
    }
    for (int h : hydrogens) out.bonds.emplace_back(std::min(oxygen, h), std::max(oxygen, h));
    chain.residues.push_back(residue_index);
    out.residues.push_back(std::move(residue));
  }
  if (!chain.residues.empty()) out.chains.push_back(std::move(chain));
  return out;
}

}  // namespace

Topology add_solvent(const Topology& solute, const System& solute_system, const SolventOptions& options,
                     SolventReport* report) {
  check_solvent_inputs(solute, solute_system, options);
  const WaterBox water_box = load_water_box(options.water_model);  // the bundled pre-equilibrated box
  const std::vector<Vec3d>& positions = solute.positions_nm;
  const SoluteExtent extent = solute_extent(positions);
  const ChosenBox chosen =
      options.box_nm ? explicit_box(*options.box_nm, extent) : padded_box(positions, extent.max_size, options);
  const Boxd& box = chosen.box;
  check_solvated_size(box, solute.num_atoms(), options);
  check_box_holds_cutoff(box, options, extent.max_size);

  const Solvation solvation{water_box, box, extent.center, Vec3d(box.a.x, box.b.y, box.c.z),
                            find_water_model(options.water_model)->sigma_nm * kVdwRadiusPerSigma};
  int near_solute = 0;
  const std::vector<PlacedWater> placed = solvation.tile(positions, solute_system, near_solute);
  std::vector<PlacedWater> kept = solvation.without_boundary_clashes(placed);
  const int atom_clashes = options.drop_atom_clashes ? solvation.drop_atom_clashes(kept) : 0;

  Topology out = with_water_chain(solute, box, water_box, kept);
  if (report) {
    report->waters_added = static_cast<int>(kept.size());
    report->removed_near_solute = near_solute;
    report->removed_boundary_clashes = static_cast<int>(placed.size() - kept.size()) - atom_clashes;
    report->removed_atom_clashes = atom_clashes;
    report->box = box;
    report->width_nm = chosen.width;
    report->enlarged = chosen.enlarged;
  }
  return out;
}

namespace {

// The stages of add_ions.

// The waters (every HOH residue, crystal waters too, as Modeller) and the solute (everything else).
struct WatersAndSolute {
  std::vector<int> waters;  // residue indices
  std::vector<Vec3d> water_oxygen;
  std::vector<Vec3d> solute;
};

WatersAndSolute split_waters(const Topology& solvated) {
  WatersAndSolute s;
  std::vector<char> is_water_atom(solvated.atoms.size(), 0);
  for (std::size_t r = 0; r < solvated.residues.size(); ++r) {
    const auto& residue = solvated.residues[r];
    if (residue.name != "HOH") continue;
    int oxygen = -1;
    for (int a : residue.atoms) {
      is_water_atom[static_cast<std::size_t>(a)] = 1;
      if (oxygen < 0 && solvated.atoms[static_cast<std::size_t>(a)].element == "O") oxygen = a;
    }
    if (oxygen < 0) throw InputError(located(solvated.source, residue.line, 0, "ions: water residue HOH without an oxygen atom"));
    s.waters.push_back(static_cast<int>(r));
    s.water_oxygen.push_back(solvated.positions_nm[static_cast<std::size_t>(oxygen)]);
  }
  for (std::size_t a = 0; a < solvated.atoms.size(); ++a)
    if (!is_water_atom[a]) s.solute.push_back(solvated.positions_nm[a]);
  return s;
}

struct IonCounts {
  int charge = 0;  // the rounded total charge
  int positive = 0, negative = 0;
  int neutralizing = 0;
  int pairs = 0;
  int total = 0;
};

// How many ions: neutralise, then pairs for the ionic strength of the remaining water (Modeller's count).
IonCounts count_ions(double total_charge_e, int num_waters, const IonOptions& options) {
  IonCounts n;
  n.charge = static_cast<int>(std::floor(0.5 + total_charge_e));
  if (options.neutralize) {
    if (std::abs(n.charge) > num_waters)
      throw InputError(fmt::format("ions: cannot neutralise a net charge of {} e with {} waters to replace; use a larger "
                                   "box (more padding)",
                                   n.charge, num_waters));
    (n.charge > 0 ? n.negative : n.positive) = std::abs(n.charge);
  }
  n.neutralizing = n.positive + n.negative;
  if (options.ionic_strength_molar > 0) {
    const double ions = (num_waters - n.positive - n.negative) * options.ionic_strength_molar / kWaterMolarity;
    const double pairs = std::floor(ions + 0.5);
    // Counted in double first: an absurd concentration must not wrap the int count.
    if (2.0 * pairs + n.positive + n.negative > num_waters)
      throw InputError(fmt::format("ions: {} M needs {:.0f} ions but there are only {} waters to replace; lower "
                                   "ionic_strength or use a larger box",
                                   nm(options.ionic_strength_molar), 2.0 * pairs + n.positive + n.negative, num_waters));
    n.pairs = static_cast<int>(pairs);
  }
  n.positive += n.pairs, n.negative += n.pairs;
  n.total = n.positive + n.negative;
  if (n.total > num_waters)
    throw InputError(fmt::format("ions: {} M needs {} ions but there are only {} waters to replace; lower ionic_strength "
                                 "or use a larger box",
                                 nm(options.ionic_strength_molar), n.total, num_waters));
  return n;
}

// Draw waters at random, far from the solute first; no two ions closer than ion_cutoff_nm. Returns indices into
// the waters in draw order; counts those near the solute in near_solute.
std::vector<int> draw_waters(const WatersAndSolute& s, const std::optional<Boxd>& box, int total_ions,
                             const IonOptions& options, int& near_solute) {
  const int num_waters = static_cast<int>(s.waters.size());
  std::vector<int> far_pool, near_pool;  // indices into waters
  {
    const double r = options.solute_distance_nm;
    const CellGrid grid(s.solute, box, std::max(r, 0.1));
    for (int w = 0; w < num_waters; ++w) {
      const Vec3d& o = s.water_oxygen[static_cast<std::size_t>(w)];
      bool near = false;
      if (r > 0)
        grid.for_each_near(o, [&](int i) {
          if (!near && norm2(grid.delta(o, s.solute[static_cast<std::size_t>(i)])) < r * r) near = true;
        });
      (near ? near_pool : far_pool).push_back(w);
    }
  }
  std::mt19937_64 rng(options.seed);
  std::vector<int> chosen;
  for (std::vector<int>* pool : {&far_pool, &near_pool}) {
    while (static_cast<int>(chosen.size()) < total_ions && !pool->empty()) {
      const std::size_t k = uniform_index(rng, pool->size());
      const int w = (*pool)[k];
      (*pool)[k] = pool->back();
      pool->pop_back();
      const Vec3d& o = s.water_oxygen[static_cast<std::size_t>(w)];
      bool clash = false;
      for (int c : chosen) {
        const Vec3d d = o - s.water_oxygen[static_cast<std::size_t>(c)];
        if (norm(box ? box->minimum_image(d) : d) <= options.ion_cutoff_nm) clash = true;
      }
      if (clash) continue;
      chosen.push_back(w);
      if (pool == &near_pool) ++near_solute;
    }
  }
  if (static_cast<int>(chosen.size()) < total_ions)
    throw InputError(fmt::format("ions: could place only {} of {} ions at least {} nm apart; lower ionic_strength or use "
                                 "a larger box",
                                 chosen.size(), total_ions, nm(options.ion_cutoff_nm)));
  return chosen;
}

// Every residue of `solvated` but the replaced waters (empty chains dropped), with the bonds among the atoms kept.
Topology without_waters(const Topology& solvated, const std::vector<char>& replaced) {
  Topology out;
  out.source = solvated.source;
  out.box = solvated.box;
  std::vector<int> new_atom(solvated.atoms.size(), -1);
  for (const auto& chain : solvated.chains) {
    TopologyChain new_chain;
    new_chain.id = chain.id;
    for (int r : chain.residues) {
      if (replaced[static_cast<std::size_t>(r)]) continue;
      TopologyResidue residue = solvated.residues[static_cast<std::size_t>(r)];
      residue.chain = static_cast<int>(out.chains.size());
      residue.atoms.clear();
      for (int a : solvated.residues[static_cast<std::size_t>(r)].atoms) {
        TopologyAtom atom = solvated.atoms[static_cast<std::size_t>(a)];
        atom.residue = static_cast<int>(out.residues.size());
        new_atom[static_cast<std::size_t>(a)] = out.num_atoms();
        residue.atoms.push_back(out.num_atoms());
        out.atoms.push_back(std::move(atom));
        out.positions_nm.push_back(solvated.positions_nm[static_cast<std::size_t>(a)]);
      }
      new_chain.residues.push_back(static_cast<int>(out.residues.size()));
      out.residues.push_back(std::move(residue));
    }
    if (!new_chain.residues.empty()) out.chains.push_back(std::move(new_chain));
  }
  for (const auto* pairs_in : {&solvated.bonds, &solvated.conect}) {
    auto& pairs_out = pairs_in == &solvated.bonds ? out.bonds : out.conect;
    for (const auto& [i, j] : *pairs_in) {
      const int a = new_atom[static_cast<std::size_t>(i)], b = new_atom[static_cast<std::size_t>(j)];
      if (a >= 0 && b >= 0) pairs_out.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  return out;
}

// The ion chain after the others: one residue per ion at its water's oxygen, the first num_positive positive.
void append_ion_chain(Topology& out, const std::vector<Vec3d>& positions, int num_positive, const IonKind& positive,
                      const IonKind& negative) {
  TopologyChain ion_chain;
  ion_chain.id = unused_chain_id(out);
  const int chain_index = static_cast<int>(out.chains.size());
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const IonKind& kind = static_cast<int>(k) < num_positive ? positive : negative;
    TopologyResidue residue;
    residue.name = kind.residue;
    residue.chain = chain_index;
    residue.number = static_cast<int>(k) + 1;
    residue.atoms.push_back(out.num_atoms());
    TopologyAtom atom;
    atom.name = kind.atom;
    atom.element = kind.element;
    atom.residue = static_cast<int>(out.residues.size());
    atom.serial = out.num_atoms() + 1;
    out.atoms.push_back(std::move(atom));
    out.positions_nm.push_back(positions[k]);
    ion_chain.residues.push_back(static_cast<int>(out.residues.size()));
    out.residues.push_back(std::move(residue));
  }
  out.chains.push_back(std::move(ion_chain));
}

}  // namespace

Topology add_ions(const Topology& solvated, double total_charge_e, const IonOptions& options, IonReport* report) {
  check_positions(solvated, "ions");
  const IonKind& positive = find_ion(kPositiveIons, options.positive_ion, "positive");
  const IonKind& negative = find_ion(kNegativeIons, options.negative_ion, "negative");
  if (!(options.ionic_strength_molar >= 0) || !std::isfinite(options.ionic_strength_molar))
    throw InputError(fmt::format("ions: the ionic strength must be zero or positive (got {} M); 0.15 M is physiological",
                                 nm(options.ionic_strength_molar)));
  if (!std::isfinite(total_charge_e)) throw InputError("ions: the total charge is not finite");

  const WatersAndSolute split = split_waters(solvated);
  const int num_waters = static_cast<int>(split.waters.size());
  const IonCounts count = count_ions(total_charge_e, num_waters, options);
  int near_solute = 0;
  const std::vector<int> chosen = draw_waters(split, solvated.box, count.total, options, near_solute);

  // The result: every residue but the replaced waters, then the ions at the replaced waters' oxygens.
  std::vector<char> replaced(solvated.residues.size(), 0);
  std::vector<Vec3d> ion_positions;
  for (int w : chosen) {
    replaced[static_cast<std::size_t>(split.waters[static_cast<std::size_t>(w)])] = 1;
    ion_positions.push_back(split.water_oxygen[static_cast<std::size_t>(w)]);
  }
  Topology out = without_waters(solvated, replaced);
  if (!chosen.empty()) append_ion_chain(out, ion_positions, count.positive, positive, negative);

  if (report) {
    report->positive = count.positive;
    report->negative = count.negative;
    report->neutralizing = count.neutralizing;
    report->pairs = count.pairs;
    report->near_solute = near_solute;
    report->net_charge_before = count.charge;
    report->net_charge_after = count.charge + count.positive - count.negative;
    report->waters_left = num_waters - count.total;
    const int solvent_waters = num_waters - count.neutralizing;
    report->ionic_strength_molar = solvent_waters > 0 ? count.pairs * kWaterMolarity / solvent_waters : 0.0;
  }
  return out;
}

}  // namespace mdsim
