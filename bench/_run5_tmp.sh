set -u
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DMDSIM_WERROR=OFF > /tmp/configure.log 2>&1
ninja -C build-device mdsim test_cuda_forces test_cuda_pme > /tmp/build.log 2>&1 || { grep -E "error" -A5 /tmp/build.log | head -40; exit 1; }
(build-device/tests/test_cuda_forces; build-device/tests/test_cuda_pme) > $OUT/tests.txt 2>&1; echo "tests rc $?"; grep -E "passed|failed|tiles" $OUT/tests.txt | tail -8
for b in 0.1 0.12 0.14; do for r in 1 2; do
  sed "s|pdb: ../tests|pdb: $PWD/tests|; s|^platform:.*|platform: {name: cuda, precision: mixed, neighbor_buffer: $b nm}|" configs/dhfr_benchmark.yaml > /tmp/b$r.yaml
  [ $r = 1 ] || sed -i "s|  hydrogen_mass: 1.5 amu|  hydrogen_mass: 1.5 amu\n  replicate: [$r, $r, $r]|" /tmp/b$r.yaml
  echo "buffer $b"; build-device/mdsim bench /tmp/b$r.yaml --steps $((r==1 ? 5000 : 1500)) 2>&1 | grep -E "^\| [0-9]|tiles"
done; done | tee $OUT/bench.txt
