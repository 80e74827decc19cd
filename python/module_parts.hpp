// The `mdsim` extension's parts in files of their own (python/mdsim_module.cpp binds them).
#pragma once

#include <pybind11/pybind11.h>

#include "model/topology.hpp"

namespace mdsim::python {

// The topology's per-atom fields as a dict (atom_names, elements, residue_names, chain_ids lists; residue_numbers,
// residue_index int64 arrays).
pybind11::dict topology_dict(const Topology& topology);

}  // namespace mdsim::python
