// OpenMM ForceField XML reader (the format of OpenMM's app/data/*.xml; user guide chapter "Creating Force
// Fields"). Reads atom types, residue templates (with <VirtualSite>s), HarmonicBondForce, HarmonicAngleForce,
// PeriodicTorsionForce (Proper/Improper, type or class attributes, "" wildcards, `ordering`), NonbondedForce (1-4 scales,
// UseAttributeFromResidue) and <Include>; several files are merged the way OpenMM's ForceField(*files) does.
// Also reads OpenMM's standard-residue tables (residues.xml, pdbNames.xml) that the System builder uses to
// create topology bonds. No physics here: model/forcefield turns this data plus a Topology into a System.
//
// Units as in the files: nm, kJ/mol, rad, amu, e.
#pragma once

#include <string>
#include <vector>

#include "model/forcefield_data.hpp"

namespace mdsim {

// Folders searched for bundled files of one kind, in order: <data root>/<share_subfolder> when a data root was set
// (set_bundled_data_root), <exe dir>/../share/mdsim/<share_subfolder> (installed), then source_dir (the source tree's
// copy; none when empty). Missing ones skipped.
std::vector<std::string> bundled_dirs(const std::string& share_subfolder, const std::string& source_dir);
// The folder holding the bundled forcefields/ and data/ of a copy that is not beside the running program: the pip
// package's mdsim/share/mdsim, which the Python package sets at import (the program there is python). Process-wide.
void set_bundled_data_root(const std::string& folder);

// Folders searched for bundled force-field names: bundled_dirs("forcefields", the source tree's forcefields/
// from the compile definition MDSIM_SOURCE_FORCEFIELD_DIR).
std::vector<std::string> default_forcefield_dirs();

// Resolve a force-field name: an absolute path as is; otherwise the first of search_dirs/name that exists,
// else base_dir/name. Throws InputError naming the file and every folder searched when none exists.
std::string resolve_forcefield_path(const std::string& name, const std::string& base_dir,
                                    const std::vector<std::string>& search_dirs);

// Load and merge force-field files (with their <Include>s) like OpenMM's ForceField(*names), plus the standard
// residue tables (residues.xml and pdbNames.xml from the first search dir that has them). Throws InputError
// ("file:line: message") on malformed XML, missing attributes, unknown atom types, duplicate definitions.
ForceFieldData load_forcefields(const std::vector<std::string>& names, const std::string& base_dir,
                                const std::vector<std::string>& search_dirs = default_forcefield_dirs());

// One force-field file from its text (`source` names it in messages), read as load_forcefields reads each
// file, without following its <Include>s and without the standard residue tables (ff.standard stays
// unloaded). For tests and the fuzz target.
ForceFieldData parse_forcefield_xml(const std::string& text, const std::string& source);

// Read residues.xml and pdbNames.xml from the given folder.
StandardResidueData load_standard_residue_data(const std::string& dir);

}  // namespace mdsim
