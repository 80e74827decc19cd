// Chemical elements: symbol, atomic number and mass, with the same table as OpenMM 7.7's
// app/element.py (masses in amu = dalton, including deuterium "D" and the placeholder symbols
// OpenMM knows up to Uuh). Used by the PDB reader to recognise and infer elements and by the
// force-field builder for per-particle masses.
#pragma once

#include <string>
#include <string_view>

namespace mdsim {

struct Element {
  const char* symbol;  // capitalised as usual: "C", "Cl", "Na"
  int atomic_number;
  double mass_amu;
};

// Looks an element up by its symbol, ignoring case and surrounding blanks ("CL", " cl", "Cl");
// nullptr if no element has that symbol.
const Element* find_element(std::string_view symbol);

// The element whose mass is nearest `mass_amu` (OpenMM's Element.getByMass), among the real elements up to
// atomic number 110 (no deuterium, no placeholder symbols); hydrogen for masses below 2.5 amu; nullptr for a mass
// that is not positive.
const Element* element_by_mass(double mass_amu);

// The element with this atomic number (OpenMM's Element.getByAtomicNumber; hydrogen for 1, not deuterium);
// nullptr for a number no element has (0: an AMBER extra point).
const Element* element_by_atomic_number(int atomic_number);

// A symbol as written usually: blanks removed, first letter upper case, the rest lower (" cL " -> "Cl").
std::string normalise_element_symbol(std::string_view symbol);

}  // namespace mdsim
