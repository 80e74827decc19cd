// GROMACS [cmap], constraints, virtual sites and position restraints of one molecule type (io/gromacs_top_build.hpp).
#include <fmt/format.h>

#include <cmath>

#include "common/errors.hpp"
#include "io/gromacs_top_build.hpp"
#include "model/cmap.hpp"

namespace mdsim {

namespace {

int count_of(const GmxMoleculeAtoms& atoms) { return static_cast<int>(atoms.type.size()); }

std::string field_or_empty(const GmxRecord& r, std::size_t i) { return i < r.fields.size() ? r.fields[i] : ""; }

// A [cmaptypes] line's grid (rows phi, columns psi, both from -180 degrees) as mdsim's CmapMap (energy[i + size j] at
// phi = i 2pi/size, psi = j 2pi/size): shifted by half a period in both angles.
CmapMap cmap_grid(const GmxRecord& p) {
  const int nx = gmx_integer(p, 6, "the grid size nx"), ny = gmx_integer(p, 7, "the grid size ny");
  if (nx != ny || nx < 2)
    gmx_fail(p.where, fmt::format("[ cmaptypes ]: a {} x {} grid; mdsim supports square grids only", nx, ny));
  if (p.fields.size() != 8 + static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny))
    gmx_fail(p.where, fmt::format("[ cmaptypes ]: {} grid values for a {} x {} grid", p.fields.size() - 8, nx, ny));
  return cmap_map_from_minus_180(
      nx, [&](std::size_t k) { return gmx_number(p, 8 + k, "a CMAP grid value (kJ/mol)"); }, 1.0);
}

void add_constraints(const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms, const GmxTopology& top,
                     GmxFragment& out) {
  for (const GmxRecord& r : m.section("constraints")) {
    const int i = gmx_atom(r, 0, count_of(atoms), "constraints"), j = gmx_atom(r, 1, count_of(atoms), "constraints");
    const std::string func = field_or_empty(r, 2);
    if (func != "1" && func != "2")
      gmx_fail(r.where, fmt::format("[ constraints ] function type {} is not supported (mdsim reads 1 and 2)", func));
    const GmxRecord* p = &r;
    if (r.fields.size() < 4) {
      const std::string a = atoms.type[static_cast<std::size_t>(i)]->bonded, b = atoms.type[static_cast<std::size_t>(j)]->bonded;
      for (const auto* table : {&top.constrainttypes, &top.bondtypes})
        for (const std::string& key : {a + " " + b + " " + (table == &top.bondtypes ? "1" : func),
                                       b + " " + a + " " + (table == &top.bondtypes ? "1" : func)})
          if (p == &r && table->count(key) > 0) p = &table->at(key);
      if (p == &r)
        gmx_fail(r.where, fmt::format("no length for the constraint {}-{}: [ constrainttypes ] and [ bondtypes ] have "
                                      "no line for the types {} {}; give b0 on this line (ai aj {} b0)",
                                      i + 1, j + 1, a, b, func));
    }
    out.system.constraints.push_back({i, j, gmx_number(*p, 3, "b0 (nm)")});
    if (func == "1") out.graph_bonds.emplace_back(i, j);
  }
  for (const GmxRecord& r : m.section("settles")) {
    // SETTLE water: three constraints (O-H, O-H, H-H), as OpenMM's GromacsTopFile makes them.
    const int o = gmx_atom(r, 0, count_of(atoms) - 2, "settles");
    const double doh = gmx_number(r, 2, "doh (nm)"), dhh = gmx_number(r, 3, "dhh (nm)");
    out.system.constraints.push_back({o, o + 1, doh});
    out.system.constraints.push_back({o, o + 2, doh});
    out.system.constraints.push_back({o + 1, o + 2, dhh});
    out.graph_bonds.emplace_back(o, o + 1);
    out.graph_bonds.emplace_back(o, o + 2);
  }
}

VirtualSite site2(const GmxRecord& r, int n) {
  const std::string func = field_or_empty(r, 3);
  if (func != "1")
    gmx_fail(r.where, fmt::format("[ virtual_sites2 ] function type {} is not supported (mdsim reads 1: a point on the "
                                  "line between two atoms)", func));
  VirtualSite v;
  v.particle = gmx_atom(r, 0, n, "virtual_sites2");
  v.parents = {gmx_atom(r, 1, n, "virtual_sites2"), gmx_atom(r, 2, n, "virtual_sites2"), 0};
  const double a = gmx_number(r, 4, "a");
  v.weights = {1.0 - a, a, 0.0};
  return v;
}

VirtualSite site3(const GmxRecord& r, int n) {
  const std::string func = field_or_empty(r, 4);
  VirtualSite v;
  v.particle = gmx_atom(r, 0, n, "virtual_sites3");
  v.num_parents = 3;
  v.parents = {gmx_atom(r, 1, n, "virtual_sites3"), gmx_atom(r, 2, n, "virtual_sites3"),
               gmx_atom(r, 3, n, "virtual_sites3")};
  const double a = gmx_number(r, 5, "a"), b = gmx_number(r, 6, "b");
  if (func == "1") {  // 3: weighted average
    v.type = VirtualSiteType::ThreeParticleAverage;
    v.weights = {1.0 - a - b, a, b};
  } else if (func == "3") {  // 3fad: angle theta (degrees) and distance d in the plane, as OpenMM maps it
    v.type = VirtualSiteType::LocalCoordinates;
    const double theta = a * M_PI / 180.0;
    v.origin_weights = {1, 0, 0};
    v.x_weights = {-1, 1, 0};
    v.y_weights = {0, -1, 1};
    v.local_position_nm = Vec3d(b * std::cos(theta), b * std::sin(theta), 0.0);
  } else if (func == "4") {  // 3out
    v.type = VirtualSiteType::OutOfPlane;
    v.weights = {a, b, gmx_number(r, 7, "c (1/nm)")};
  } else {
    gmx_fail(r.where, fmt::format("[ virtual_sites3 ] function type {} is not supported (mdsim reads 1 (3), 3 (3fad) "
                                  "and 4 (3out), as OpenMM does)", func));
  }
  return v;
}

void add_sites(const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms, GmxFragment& out) {
  for (const char* name : {"virtual_sites2", "dummies2"})
    for (const GmxRecord& r : m.section(name)) out.system.virtual_sites.push_back(site2(r, count_of(atoms)));
  for (const char* name : {"virtual_sites3", "dummies3"})
    for (const GmxRecord& r : m.section(name)) out.system.virtual_sites.push_back(site3(r, count_of(atoms)));
  for (const GmxRecord& r : m.section("position_restraints")) {
    const int i = gmx_atom(r, 0, count_of(atoms), "position_restraints");
    if (field_or_empty(r, 1) != "1")
      gmx_fail(r.where, fmt::format("[ position_restraints ] function type {} is not supported (mdsim reads 1)",
                                    field_or_empty(r, 1)));
    out.restraints.push_back({i,
                              {gmx_number(r, 2, "fcx (kJ/mol/nm^2)"), gmx_number(r, 3, "fcy (kJ/mol/nm^2)"),
                               gmx_number(r, 4, "fcz (kJ/mol/nm^2)")},
                              r.where->file,
                              r.where->line,
                              r.where->guard});
  }
}

}  // namespace

void add_gromacs_cmap(const GmxTopology& top, const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms,
                      std::vector<CmapMap>& maps, GmxFragment& out) {
  for (const GmxRecord& r : m.section("cmap")) {
    std::array<int, 5> a{};
    std::vector<std::string> types;
    for (std::size_t k = 0; k < 5; ++k) {
      a[k] = gmx_atom(r, k, count_of(atoms), "cmap");
      types.push_back(atoms.type[static_cast<std::size_t>(a[k])]->bonded);
    }
    const std::string func = field_or_empty(r, 5);
    if (func != "1") gmx_fail(r.where, fmt::format("[ cmap ] function type {} is not supported (mdsim reads 1)", func));
    std::string key = types[0] + " " + types[1] + " " + types[2] + " " + types[3] + " " + types[4] + " 1";
    std::string reversed = types[4] + " " + types[3] + " " + types[2] + " " + types[1] + " " + types[0] + " 1";
    auto it = top.cmaptypes.find(key);
    if (it == top.cmaptypes.end()) it = top.cmaptypes.find(reversed);
    if (it == top.cmaptypes.end())
      gmx_fail(r.where, fmt::format("no parameters for the CMAP {}-{}-{}-{}-{}: [ cmaptypes ] has no grid for the "
                                    "types {} {} {} {} {} (function 1), in either order",
                                    a[0] + 1, a[1] + 1, a[2] + 1, a[3] + 1, a[4] + 1, types[0], types[1], types[2],
                                    types[3], types[4]));
    const CmapMap grid = cmap_grid(it->second);
    std::size_t index = 0;
    while (index < maps.size() && !(maps[index].size == grid.size &&
                                    maps[index].energy_kj_per_mol == grid.energy_kj_per_mol))
      ++index;
    if (index == maps.size()) maps.push_back(grid);
    out.system.cmap_torsions.push_back({{a[0], a[1], a[2], a[3], a[1], a[2], a[3], a[4]}, static_cast<int>(index)});
  }
}

void add_gromacs_sites(const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms, const GmxTopology& top,
                       GmxFragment& out) {
  for (const auto& [name, records] : m.sections) {
    static const char* const kRead[] = {"atoms",      "bonds",          "pairs",          "angles",   "dihedrals",
                                        "exclusions", "constraints",    "settles",        "cmap",     "virtual_sites2",
                                        "dummies2",   "virtual_sites3", "dummies3",       "position_restraints"};
    if (records.empty() || std::find(std::begin(kRead), std::end(kRead), name) != std::end(kRead)) continue;
    gmx_fail(records.front().where,
             fmt::format("[ {} ] in molecule type {} is not supported by mdsim (virtual sites: virtual_sites2 function "
                         "1 and virtual_sites3 functions 1, 3, 4; no pairs_nb, restraints other than "
                         "position_restraints, or polarization)",
                         name, m.name));
  }
  add_constraints(m, atoms, top, out);
  add_sites(m, atoms, out);
}

}  // namespace mdsim
