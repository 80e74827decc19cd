// The `mdsim` extension's parts in files of their own (python/mdsim_module.cpp binds them).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "model/topology.hpp"

namespace mdsim::python {

// The topology as a dict (python/mdsim/topology.py reads it). Per atom: atom_names, elements, residue_names,
// chain_ids (lists of str); residue_numbers, residue_index (int64 arrays); atom_serials (int64 array, None when the
// reader numbered no atom). residues: a dict of names, insertion_codes ("" for none; lists), numbers (resSeq) and
// chain_index (int64 arrays). chain_id_list: the chains' ids. bonds: Topology::bonds as an (n, 2) int64 array.
// box_nm: the structure's box (3 x 3, rows a, b, c) or None.
pybind11::dict topology_dict(const Topology& topology);

// Box vectors (nm) as a 3 x 3 numpy array, rows a, b, c.
pybind11::array_t<double> box_array(const Boxd& box);

// Module functions of module_topology.cpp: _read_structure_topology(path) (mdsim.Topology.from_file).
void bind_topology(pybind11::module_& m);

}  // namespace mdsim::python
