#include "model/system_copies.hpp"

#include <type_traits>

#include "common/errors.hpp"

namespace mdsim {

namespace {

// Appends every bonded term of `source` to the list of its type in `target`, atoms shifted by offset.
void append_bonded(System& target, const System& source, int offset) {
  target.for_each_bonded([&](auto& terms) {
    using List = std::decay_t<decltype(terms)>;
    source.for_each_bonded([&](const auto& from) {
      if constexpr (std::is_same_v<std::decay_t<decltype(from)>, List>)
        for (auto term : from) {
          term.shift_atoms(offset);
          terms.push_back(term);
        }
    });
  });
}

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

System repeat_system(const System& t, int copies) {
  if (copies < 1) throw RuntimeError("repeat_system: at least one copy");
  System s;
  s.nonbonded = t.nonbonded;
  s.box = t.box;
  s.cmap_maps = t.cmap_maps;  // shared by every copy's CMAP torsions (map indices unchanged)
  if (t.lj_types) {  // the NBFIX table shared by every copy; each copy's particles keep their types
    s.lj_types = *t.lj_types;
    s.lj_types->particle_type.clear();
  }
  const int n = t.num_particles();
  for (int copy = 0; copy < copies; ++copy) {
    const int off = copy * n;
    append(s.mass_amu, t.mass_amu);
    append(s.charge_e, t.charge_e);
    append(s.sigma_nm, t.sigma_nm);
    append(s.epsilon_kj_per_mol, t.epsilon_kj_per_mol);
    append_bonded(s, t, off);
    for (auto e : t.exceptions) {
      e.i += off;
      e.j += off;
      s.exceptions.push_back(e);
    }
    for (auto c : t.constraints) {
      c.i += off;
      c.j += off;
      s.constraints.push_back(c);
    }
    for (auto w : t.rigid_waters) {
      w.oxygen += off;
      w.hydrogen1 += off;
      w.hydrogen2 += off;
      s.rigid_waters.push_back(w);
    }
    for (auto v : t.virtual_sites) {
      v.shift_atoms(off);
      s.virtual_sites.push_back(v);
    }
    if (t.lj_types) append(s.lj_types->particle_type, t.lj_types->particle_type);
  }
  return s;
}

}  // namespace mdsim
