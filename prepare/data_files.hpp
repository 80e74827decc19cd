// Bundled structure data (the repository's data/ folder, e.g. the pre-equilibrated water box tip3p.pdb).
#pragma once

#include <string>

namespace mdsim {

// The path of a bundled data file: the first of <exe dir>/../share/mdsim/data/NAME (installed) and the
// source tree's data/NAME (compile definition MDSIM_SOURCE_DATA_DIR) that exists. Throws InputError naming
// the file and every folder searched when none has it.
std::string find_data_file(const std::string& name);

}  // namespace mdsim
