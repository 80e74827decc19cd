// Problems of many residues reported at once: one InputError lists every residue with the same kind of problem
// (up to kListedProblems of each kind, then "and N more"), each with its line, so a structure is fixed in one
// round instead of one residue per run. prepare/hydrogens lists the residues that lack heavy atoms; this file
// lists the residues no force-field template matches (unknown names, lone amino acids, the rest).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/forcefield.hpp"
#include "model/forcefield_data.hpp"
#include "model/system.hpp"
#include "model/topology.hpp"

namespace mdsim {

constexpr std::size_t kListedProblems = 20;

// "LYS 60A (chain 'H', line 19)": a residue in a list of problems.
std::string residue_with_line(const Topology& topology, int residue);

// The items joined by `separator`, at most kListedProblems of them, then "and N more".
std::string listed(const std::vector<std::string>& items, const std::string& separator = ", ");

// Returns when every residue of `topology` matches a template of `forcefield`. Otherwise throws one InputError,
// located at the first such residue: with one residue, build_system's message for it (for a lone amino acid,
// that the force field has no template for a residue both N- and C-terminal, and the fix); with several, all of
// them by kind: names no template has (supply their XML, or --remove-heterogens), lone residues, the rest with
// the closest template's difference.
void check_residue_templates(const Topology& topology, const ForceFieldData& forcefield);

// build_system; when it fails, check_residue_templates names every residue that matches no template (other
// failures are rethrown as they are).
System build_system_listing_residues(const Topology& topology, const ForceFieldData& forcefield,
                                     const ForceFieldOptions& options);

}  // namespace mdsim
