#!/bin/sh
# Build libopenvx (release) and install it with the OpenVX headers and a pkg-config file:
#
#   vx-capi/install.sh [PREFIX]        # default /usr/local; DESTDIR is honoured
#
# Installs PREFIX/lib/libopenvx.so, PREFIX/lib/libopenvx.a, PREFIX/include/VX/*.h and
# PREFIX/lib/pkgconfig/openvx.pc, so `cc $(pkg-config --cflags openvx) app.c $(pkg-config --libs openvx)`
# builds an OpenVX program against vx-rs. Files are written with install(1), never through a
# link already at the destination (install replaces it).
set -eu
prefix=${1:-/usr/local}
root=$(cd "$(dirname "$0")/.." && pwd)
case $prefix in /*) ;; *) echo "install.sh: PREFIX must be absolute: $prefix" >&2; exit 2 ;; esac
cargo build --release --quiet -p vx-rs-capi --manifest-path "$root/Cargo.toml"
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
# What a static link needs besides libopenvx.a (the Rust standard library's system libraries).
dest=${DESTDIR:-}$prefix
install -d "$dest/lib/pkgconfig" "$dest/include/VX"
install -m 0644 "$root"/vx-capi/include/VX/*.h "$dest/include/VX/"
install -m 0755 "$target/release/libopenvx.so" "$dest/lib/libopenvx.so"
install -m 0644 "$target/release/libopenvx.a" "$dest/lib/libopenvx.a"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" "$root/vx-capi/openvx.pc.in" > "$dest/lib/pkgconfig/openvx.pc.tmp"
mv "$dest/lib/pkgconfig/openvx.pc.tmp" "$dest/lib/pkgconfig/openvx.pc"
echo "installed vx-rs's OpenVX $version (libopenvx.so, libopenvx.a, VX/*.h, openvx.pc) under $dest"
