// Extra particles of water, as OpenMM's Modeller.addExtraParticles adds them for a water model with virtual
// sites (amber14/tip4pew.xml: the site M of HOH, average3 of O, H1, H2): every water residue that lacks its
// template's element-less atoms gets them, named as the template names them, placed by the template's
// <VirtualSite> rule from the water's own atoms. With a force field whose water has no extra particles
// (amber14/tip3p.xml) nothing changes. Units: nm.
#pragma once

#include <string>

#include "model/forcefield_data.hpp"
#include "model/topology.hpp"

namespace mdsim {

// The force field's water template with extra particles (one O, two H and element-less atoms that are all
// virtual sites), preferring one named HOH; null when the force field's waters have none. InputError when such
// a template has an element-less atom that is not a virtual site (prepare cannot place it).
const FFResidueTemplate* water_site_template(const ForceFieldData& ff);

// `top` with the extra particles of water_site_template(ff) added to every water residue (is_water: HOH, WAT,
// ...) of one oxygen and two hydrogens that has none: after the residue's last atom, in template order, element
// "", bonds from the template's bonds that involve them. Residues that already hold them are kept; CONECT and
// bonds are renumbered. Returns how many waters got them. InputError (file:line) for a water that holds some
// element-less atoms but not the template's number of them.
int add_water_extra_particles(Topology& top, const ForceFieldData& ff);

}  // namespace mdsim
