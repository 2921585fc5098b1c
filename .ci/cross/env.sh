# Sourced by .ci/cross/check: the C toolchain for each cross target (cc-rs
# reads CC_<target> / AR_<target>), and the cross target directory.
cross_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CC_aarch64_apple_darwin="$cross_dir/cc-aarch64-macos"
export AR_aarch64_apple_darwin="$cross_dir/zig-ar"
export CC_x86_64_pc_windows_gnu="$cross_dir/cc-x86_64-windows-gnu"
export AR_x86_64_pc_windows_gnu="$cross_dir/zig-ar"
