set -u
for b in 0.1 0.15 0.2; do
  echo "== buffer $b"
  sed "s|pdb: ../tests|pdb: $PWD/tests|; s|^platform:.*|platform: {name: cuda, precision: mixed, neighbor_buffer: $b nm}|" configs/dhfr_benchmark.yaml > /tmp/b1.yaml
  sed "s|  hydrogen_mass: 1.5 amu|  hydrogen_mass: 1.5 amu\n  replicate: [2, 2, 2]|" /tmp/b1.yaml > /tmp/b2.yaml
  sed "s|pdb: ../tests|pdb: $PWD/tests|; s|^platform:.*|platform: {name: cuda, precision: mixed, neighbor_buffer: $b nm}|" configs/dhfr_amber14.yaml > /tmp/a14.yaml
  build-device/mdsim bench /tmp/b1.yaml --steps 10000 | grep -E "^\| [0-9]"
  build-device/mdsim bench /tmp/a14.yaml --steps 10000 | grep -E "^\| [0-9]"
  build-device/mdsim bench /tmp/b2.yaml --steps 2000 | grep -E "^\| [0-9]"
done
