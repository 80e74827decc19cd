// Quantities with units in config files. A bare number is in MD units (nm, ps, kJ/mol, K, amu, bar,
// 1/ps, kJ/mol/nm, kJ/mol/nm^2, mol/L); a string "<number> <unit>" is converted ("2 fs", "10 Å", "1/ps", "1 atm").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mdsim {

// ForceConstant: a harmonic spring constant (position restraints), kJ/mol/nm^2; Concentration: mol/L.
enum class Dimension { Length, Time, Temperature, Mass, Pressure, Frequency, Energy, Force, ForceConstant, Concentration };

// The MD unit of a dimension, as written in messages and docs ("nm", "ps", "1/ps", ...).
const char* md_unit(Dimension d);
// What the dimension is called in messages ("length", "time", ...).
const char* dimension_name(Dimension d);
// The unit spellings accepted for a dimension, for error messages.
std::vector<std::string> accepted_units(Dimension d);

struct QuantityParse {
  std::optional<double> value;  // in MD units; empty on error
  std::string error;            // why, when empty
};

// Parses "<number>[ ]<unit>" or "<number>/<time unit>" for frequencies. A string holding only a
// number is taken in MD units.
QuantityParse parse_quantity(std::string_view text, Dimension d);

}  // namespace mdsim
