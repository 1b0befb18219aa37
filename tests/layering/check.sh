#!/usr/bin/env bash
# The layers the build enforces (docs/architecture.md, "Layers"): each probe of tests/layering/ is compiled as
# part of the layer its name starts with (an object library linked like that layer, left out of `all`), and
# every include that runs up must fail to compile with the header's own message (or, for mpi.h, not be found);
# the control probe, which includes its own layer's headers, must compile.
#   check.sh BUILD_DIR
set -u
build=$1
fail=0
for probe in core_includes_physics:"is a physics header" physics_includes_decomposition:"is a decomposition header" \
             physics_includes_io:"is an io header" physics_includes_mpi:"mpi.h" \
             decomposition_includes_physics:"is a physics header" io_includes_driver:"is a driver header"; do
  name=${probe%%:*} want=${probe#*:}
  out=$(cmake --build "$build" --target "layering_$name" 2>&1)
  if [ $? -eq 0 ]; then
    echo "FAIL: $name compiled: an include that runs up the layers must not"; fail=1
  elif ! grep -q -- "$want" <<<"$out"; then
    echo "FAIL: $name failed to compile, but not with '$want':"; tail -5 <<<"$out"; fail=1
  else
    echo "PASS: $name is refused ($want)"
  fi
done
if out=$(cmake --build "$build" --target layering_physics_includes_physics 2>&1); then
  echo "PASS: physics_includes_physics compiles (control)"
else
  echo "FAIL: the control probe does not compile:"; tail -5 <<<"$out"; fail=1
fi
exit $fail
