#!/usr/bin/env bash
# Fetch free, sharp photographs from Debian's desktop-background packages into DIR,
# the backgrounds of carousel-synth-hard (`multicrop bench synth --hard --backgrounds DIR`).
#
#     benchmarks/fetch_backgrounds.sh DIR [MAX_SIDE]
#
# Needs apt (Debian/Ubuntu with the bookworm-era package names below) and dpkg; no root needed for
# `apt-get download`.  Nothing is installed: each .deb is unpacked with `dpkg -x` into a temporary
# directory, the photographs are copied to DIR (long side at most MAX_SIDE, default 1600, when
# Pillow is importable by $PYTHON, default python3; else full size) and the rest is deleted.
# The photos are never committed to the repository: licences are GPL-2+ (mate-backgrounds) and
# LGPL-3 (plasma-workspace-wallpapers); DIR/SOURCES.txt says which file came from where.
#
# Only photographs are taken, chosen by looking at every image of the packages (checked with
# plasma-workspace-wallpapers 4:5.27.5-2 and mate-backgrounds 1.26.0-1):
#   mate-backgrounds             usr/share/backgrounds/mate/nature/*.jpg   (12 nature close-ups)
#   plasma-workspace-wallpapers  the 11 photographic wallpapers named in PLASMA_PHOTOS, largest size
# The other plasma wallpapers (all PNGs and the JPEGs Autumn, Flow, Honeywave, PastelHills,
# SafeLanding, Shell, Volna) are illustrations or renders; gnome-backgrounds 43 ships only
# WebP/SVG illustrations, so it is not used.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [MAX_SIDE]" >&2
    exit 2
fi
DEST=$1
MAX_SIDE=${2:-1600}
PYTHON=${PYTHON:-python3}
PLASMA_PHOTOS="BytheWater ColdRipple ColorfulCups DarkestHour EveningGlow FallenLeaf Grey Kite OneStandsOut Path summer_1am"

case "$MAX_SIDE" in
    ''|*[!0-9]*) echo "$0: MAX_SIDE must be a positive integer, got '$MAX_SIDE'" >&2; exit 2 ;;
esac
command -v apt-get >/dev/null && command -v dpkg >/dev/null || {
    echo "$0: needs apt-get and dpkg (a Debian or Ubuntu system)" >&2; exit 1; }

mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
if ! apt-get download plasma-workspace-wallpapers mate-backgrounds >download.log 2>&1; then
    cat download.log >&2
    echo "$0: apt-get download failed (run 'apt-get update' first?)" >&2
    exit 1
fi
for deb in ./*.deb; do
    dpkg -x "$deb" root
    dpkg-deb --show --showformat='${Package} ${Version}\n' "$deb" >>packages.txt
done

list=()
for f in root/usr/share/backgrounds/mate/nature/*.jpg; do
    list+=("$f")
done
for name in $PLASMA_PHOTOS; do
    # the largest file is the full-size photo (the others are the same photo scaled down)
    f=$(ls -S root/usr/share/wallpapers/"$name"/contents/images/*.jpg 2>/dev/null | head -n 1 || true)
    if [ -n "$f" ]; then
        list+=("$f")
    else
        echo "$0: warning: plasma wallpaper $name not found; skipped" >&2
    fi
done

{ echo "# packages: $(paste -sd';' packages.txt)"; echo "# name <- path inside its package"; } >"$DEST/SOURCES.txt"
n=0
for f in "${list[@]}"; do
    case "$f" in
        */wallpapers/*) out="plasma-$(echo "$f" | cut -d/ -f5).jpg" ;;
        *) out="mate-$(basename "$f")" ;;
    esac
    if "$PYTHON" -c "import PIL" 2>/dev/null; then
        "$PYTHON" - "$f" "$DEST/$out" "$MAX_SIDE" <<'EOF'
import sys
from PIL import Image, ImageOps

src, dst, side = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Image.open(src) as im:
    im = ImageOps.exif_transpose(im).convert("RGB")
    im.thumbnail((side, side), Image.LANCZOS)
    im.save(dst, quality=92)
EOF
    else
        cp "$f" "$DEST/$out"
    fi
    echo "$out <- ${f#root/}" >>"$DEST/SOURCES.txt"
    n=$((n + 1))
done
echo "$n photographs written to $DEST (sources: $DEST/SOURCES.txt)"
