// Files written whole or not at all (io/atomic_file): built under "<path>.partial" and renamed over the
// old file only when complete, so a failed write keeps the previous file and leaves no temporary one.
#include <filesystem>
#include <fstream>
#include <string>

#include "common/errors.hpp"
#include "io/atomic_file.hpp"
#include "support/catch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using namespace mdsim;

TEST_CASE("write_file_atomically replaces a file only with a whole new one") {
  const std::string path = "atomic_file_test.txt";
  fs::remove(path);
  fs::remove(partial_path(path));
  CHECK(partial_path(path) == "atomic_file_test.txt.partial");

  write_file_atomically(path, "first\n", "the test file");
  CHECK(mdsim_test::read_text(path) == "first\n");
  CHECK_FALSE(fs::exists(partial_path(path)));
  write_file_atomically(path, "second\n", "the test file");
  CHECK(mdsim_test::read_text(path) == "second\n");

  // A full disk (the temporary name links to /dev/full): RuntimeError naming the file and the cause;
  // the old content stays and the temporary name is gone.
  fs::create_symlink("/dev/full", partial_path(path));
  REQUIRE_THROWS_WITH(write_file_atomically(path, "third\n", "the test file"),
                      "atomic_file_test.txt: cannot write the test file: No space left on device");
  CHECK(mdsim_test::read_text(path) == "second\n");
  CHECK_FALSE(fs::exists(fs::symlink_status(partial_path(path))));

  // A folder that does not exist: InputError (the path is wrong, not the disk).
  REQUIRE_THROWS_AS(write_file_atomically("no_such_folder_atomic/x.txt", "x", "the test file"), InputError);
  fs::remove(path);
}

TEST_CASE("publish_partial moves the finished file into place, durably when asked") {
  const std::string path = "atomic_publish_test.txt";
  std::ofstream(partial_path(path)) << "done\n";
  publish_partial(partial_path(path), path, "the test file", true);
  CHECK(mdsim_test::read_text(path) == "done\n");
  CHECK_FALSE(fs::exists(partial_path(path)));
  // Nothing to move: a RuntimeError naming the file, the old one kept.
  REQUIRE_THROWS_AS(publish_partial(partial_path(path), path, "the test file", false), RuntimeError);
  CHECK(mdsim_test::read_text(path) == "done\n");
  fs::remove(path);
}
