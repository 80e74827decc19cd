// Virtual sites from residue templates' <VirtualSite> elements, as OpenMM 7.7's createSystem adds them
// (TwoParticleAverageSite, ThreeParticleAverageSite, OutOfPlaneSite, LocalCoordinatesSite), and the particles whose
// exclusions each site shares (data.excludeAtomWith).
#include <cstddef>

#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {
namespace {

// The particle of residue r matched to template atom `template_atom`.
int residue_atom(const GeneratorInput& in, int r, int template_atom) {
  for (int a : in.topology.residues[static_cast<std::size_t>(r)].atoms)
    if (in.match.atom_template_index[static_cast<std::size_t>(a)] == template_atom) return a;
  return -1;  // not reached: a matched residue has every template atom
}

VirtualSite make_site(const GeneratorInput& in, int particle, const FFVirtualSite& v) {
  const int r = in.topology.atoms[static_cast<std::size_t>(particle)].residue;
  VirtualSite s;
  s.particle = particle;
  s.num_parents = static_cast<int>(v.parents.size());
  for (std::size_t k = 0; k < v.parents.size(); ++k) s.parents[k] = residue_atom(in, r, v.parents[k]);
  switch (v.type) {
    case FFVirtualSiteType::Average2:
      s.type = VirtualSiteType::TwoParticleAverage;
      break;
    case FFVirtualSiteType::Average3:
      s.type = VirtualSiteType::ThreeParticleAverage;
      break;
    case FFVirtualSiteType::OutOfPlane:
      s.type = VirtualSiteType::OutOfPlane;
      break;
    case FFVirtualSiteType::LocalCoords:
      s.type = VirtualSiteType::LocalCoordinates;
      for (std::size_t k = 0; k < 3; ++k) {
        s.origin_weights[k] = v.origin_weights[k];
        s.x_weights[k] = v.x_weights[k];
        s.y_weights[k] = v.y_weights[k];
      }
      s.local_position_nm = Vec3d(v.local_position_nm[0], v.local_position_nm[1], v.local_position_nm[2]);
      break;
  }
  for (std::size_t k = 0; k < v.weights.size(); ++k) s.weights[k] = v.weights[k];
  return s;
}

}  // namespace

void add_virtual_sites(const GeneratorInput& in, System& sys) {
  for (int a = 0; a < in.topology.num_atoms(); ++a)
    if (const FFVirtualSite* v = in.match.atom_site[static_cast<std::size_t>(a)]) sys.virtual_sites.push_back(make_site(in, a, *v));
}

std::vector<std::vector<int>> sites_excluded_with(const GeneratorInput& in) {
  std::vector<std::vector<int>> children(static_cast<std::size_t>(in.topology.num_atoms()));
  for (int a = 0; a < in.topology.num_atoms(); ++a)
    if (const FFVirtualSite* v = in.match.atom_site[static_cast<std::size_t>(a)]) {
      const int parent = residue_atom(in, in.topology.atoms[static_cast<std::size_t>(a)].residue, v->exclude_with);
      children[static_cast<std::size_t>(parent)].push_back(a);
    }
  return children;
}

}  // namespace mdsim::ffgen
