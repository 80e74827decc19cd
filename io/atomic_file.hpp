// Outputs that cannot lie: a file is built under "<path>.partial" in the same folder and renamed over
// `path` only when it is whole, so a failure or a kill leaves the previous file (or none), never half
// of a new one.
#pragma once

#include <string>
#include <string_view>

namespace mdsim {

// "<path>.partial": the temporary name a file is built under.
std::string partial_path(const std::string& path);

// Moves the finished `partial` over `path`. With `durable`, the data reach the disk before the rename
// and the rename reaches it after (fsync of the file and of its folder), as a checkpoint needs. On
// failure `partial` is removed and RuntimeError names `what` and the cause.
void publish_partial(const std::string& partial, const std::string& path, std::string_view what, bool durable);

// Writes `bytes` to `path` through a partial file (not fsync'ed). Throws InputError when the file
// cannot be created (the folder's fault), RuntimeError when writing fails; `what` names the file's role
// in the messages ("the final PDB").
void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view what);

}  // namespace mdsim
