#include "model/prepare_options.hpp"

namespace mdsim {

const char* to_string(BoxShape shape) {
  switch (shape) {
    case BoxShape::Cube: return "cube";
    case BoxShape::Dodecahedron: return "dodecahedron";
    case BoxShape::Octahedron: return "octahedron";
  }
  return "cube";
}

}  // namespace mdsim
