// OpenMM's hydrogen definitions (app/data/hydrogens.xml, the file Modeller.addHydrogens reads): for each
// residue name, the hydrogens it may carry, each with its parent heavy atom, the highest pH at which it is
// present (maxph), the variants that have it (HID, HIP, ...) and the chain ends where it exists (terminal:
// "N", "C", "-" = neither, or combinations). A file format of plain data; prepare/hydrogens uses it.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace mdsim {

struct HydrogenDefinition {
  std::string name;                   // "HD1"
  std::string parent;                 // heavy atom it is bonded to ("ND1")
  double max_ph = std::numeric_limits<double>::infinity();  // present only at pH <= max_ph (unless a variant says)
  std::vector<std::string> variants;  // empty = every variant; else only these ("HID", "HIP")
  std::string terminal;               // "" = anywhere; else the chain positions where it exists: N, C, -
};

struct ResidueHydrogens {
  std::string name;                       // residue name ("HIS")
  std::vector<std::string> variants;      // the variants the residue may take ("HID", "HIE", "HIP", "HIN")
  std::vector<HydrogenDefinition> hydrogens;  // file order
};

struct HydrogenDefinitions {
  std::map<std::string, ResidueHydrogens> residues;  // by residue name
  std::vector<std::string> files;                    // files read, for messages
};

// Read a hydrogens.xml file; definitions of a residue already present are replaced (as Modeller's
// loadHydrogenDefinitions does when a second file is loaded). Throws InputError ("file:line: ...") on
// malformed XML, a missing name/parent attribute or an unreadable maxph.
void load_hydrogen_definitions(const std::string& path, HydrogenDefinitions& into);
HydrogenDefinitions load_hydrogen_definitions(const std::string& path);

// The same from the file's text; `source` names it in messages.
void parse_hydrogen_definitions(const std::string& text, const std::string& source, HydrogenDefinitions& into);

}  // namespace mdsim
