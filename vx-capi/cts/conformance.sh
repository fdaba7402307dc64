#!/usr/bin/env bash
# Build the Khronos OpenVX conformance tests (CTS) against vx-rs's libopenvx.so and headers, run
# them, and print passed / failed per test case:
#
#   vx-capi/cts/conformance.sh CTS_SOURCE_DIR [FILTER] [BUILD_DIR]
#
# CTS_SOURCE_DIR: a checkout of https://github.com/KhronosGroup/OpenVX-cts (branch openvx_1.3;
# the figures in docs/book/src/c-api.md are of commit 930f179). FILTER: the CTS's --filter
# (':'-separated patterns, '*' the only wildcard, each negative pattern with its own '-');
# default: the test cases of the C API's core. BUILD_DIR: default a fresh directory made with
# mktemp. Needs cmake and a C compiler. Options as the C API issue measures them: VISION,
# ENHANCED VISION, PIPELINING, STREAMING and USER_DATA_OBJECT on, NN, IX and U1 off.
set -euo pipefail
if [ $# -lt 1 ]; then sed -n '2,13p' "$0"; exit 2; fi
cts=$(cd "$1" && pwd)
filter=${2:-'GraphBase.*:Logging.*:TargetBase.*:SmokeTestBase.*:UserNode.*:UserDataObject.*:SmokeTest.*:GraphDelay.*'}
build=${3:-$(mktemp -d)}
mkdir -p "$build"
root=$(cd "$(dirname "$0")/../.." && pwd)
cargo build --quiet -p vx-rs-capi --lib --manifest-path "$root/Cargo.toml"
lib="${CARGO_TARGET_DIR:-$root/target}/debug"
cmake -S "$cts" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DOPENVX_LIBRARIES="$lib/libopenvx.so;pthread;dl;m;rt" -DOPENVX_INCLUDES="$root/vx-capi/include" \
    -DOPENVX_CONFORMANCE_VISION=ON -DOPENVX_USE_ENHANCED_VISION=ON -DOPENVX_USE_PIPELINING=ON \
    -DOPENVX_USE_STREAMING=ON -DOPENVX_USE_USER_DATA_OBJECT=ON -DOPENVX_USE_U1=OFF -DOPENVX_USE_IX=OFF \
    -DOPENVX_USE_NN=OFF -DOPENVX_USE_NN_16=OFF -DOPENVX_CONFORMANCE_NEURAL_NETWORKS=OFF \
    -DOPENVX_CONFORMANCE_NNEF_IMPORT=OFF >"$build/configure.log"
cmake --build "$build" --target vx_test_conformance test-testmodule -- -j2 >"$build/build.log"
exe=$(find "$build" -name vx_test_conformance -type f -perm -u+x | head -n 1)
module_dir=$(dirname "$(find "$build" -name 'libtest-testmodule.so' | head -n 1)")
log="$build/cts.log"
# The CTS test module is found where OpenVX programs find modules: LD_LIBRARY_PATH.
LD_LIBRARY_PATH="$module_dir:$lib" VX_TEST_DATA_PATH="$cts/test_data/" \
    timeout 3600 "$exe" --filter="$filter" >"$log" 2>&1 || true
awk '
    /^\[ +DONE +\]/     { split($4, n, "."); pass[n[1]]++; seen[n[1]] = 1 }
    /^\[ !FAILED! \]/   { split($4, n, "."); fail[n[1]]++; seen[n[1]] = 1 }
    END {
        printf "%-22s %7s %7s\n", "test case", "passed", "failed"
        for (c in seen) { printf "%-22s %7d %7d\n", c, pass[c], fail[c]; tp += pass[c]; tf += fail[c] }
        printf "%-22s %7d %7d\n", "TOTAL", tp, tf
    }' "$log"
grep -E '^\[ (ALL DONE|PASSED|FAILED) ' "$log" | head -n 3 || true
echo "log: $log"
