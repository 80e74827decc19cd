// The `mdsim run` config `mdsim prepare --config` writes: the prepared structure with the force field it was
// prepared for, PME when it has a box, and the usual equilibration protocol as stages (docs/config.md):
// minimise with the solute's heavy atoms restrained, restrained NVT, restrained NPT, then unrestrained
// production (NPT). Times, restraint constant, temperature, pressure and cutoff from PrepareOptions.
#pragma once

#include <string>

#include "model/prepare_options.hpp"

namespace mdsim {

struct PreparedSystem;

// The config's text. `structure_path` and `config_path` as they will be written; the structure is named
// relative to the config's folder.
std::string protocol_config(const PreparedSystem& prepared, const std::string& structure_path,
                            const std::string& config_path, const PrepareOptions& options);

}  // namespace mdsim
