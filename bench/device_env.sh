#!/usr/bin/env bash
# Sourced by the device scripts: CMake flags for the header-only Debian packages the GPU machine lacks
# (gemmi-dev, tao-pegtl-dev, libdlpack-dev, zlib1g-dev's header). DEB_DIR names a folder of their .debs
# (apt-get download gemmi-dev tao-pegtl-dev libdlpack-dev zlib1g-dev, carried along), unpacked here into
# /tmp/debs. Defines set_deb_flags, which sets the array deb_flags from DEB_DIR as it is when called (empty
# without it), and configure_device_build, which calls it and is every device script's configure line.
set_deb_flags() {
  deb_flags=()
  [ -n "${DEB_DIR:-}" ] || return 0
  rm -rf /tmp/debs && mkdir -p /tmp/debs && for deb in "$DEB_DIR"/*.deb; do dpkg -x "$deb" /tmp/debs; done
  deb_flags=(-DDLPACK_INCLUDE_DIR=/tmp/debs/usr/include -DGEMMI_INCLUDE_DIR=/tmp/debs/usr/include
             -DPEGTL_INCLUDE_DIR=/tmp/debs/usr/include)
  # zlib's header where the machine has only the library.
  if [ ! -e /usr/include/zlib.h ] && [ -e /tmp/debs/usr/include/zlib.h ]; then
    deb_flags+=(-DZLIB_INCLUDE_DIR=/tmp/debs/usr/include
                -DZLIB_LIBRARY="$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)")
  fi
}

# Configures a build as every device check builds it (Release, sm_90, Ninja, warnings not fatal, the headers
# above), its log in $1: the tree SOURCE (default .) into BUILD (default build-device), with any further CMake
# arguments after them. On failure prints the log's tail and returns 1.
#   configure_device_build LOG [SOURCE BUILD [cmake arguments...]]
configure_device_build() {
  local log=$1 source=${2:-.} build=${3:-build-device}
  shift $(($# < 3 ? $# : 3))
  set_deb_flags
  cmake -S "$source" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DMDSIM_WERROR=OFF \
    "${deb_flags[@]}" "$@" > "$log" 2>&1 || { tail -30 "$log"; return 1; }
}
