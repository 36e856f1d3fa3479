#!/bin/sh
# Remakes the arithmetic-coded JPEGs and their Huffman twins from the conformance corpus, with
# libjpeg-turbo's jpegtran (Debian's libjpeg-turbo-progs; these were made with 2.1.5). Each
# twin is made FROM the arithmetic file, so both hold the same DCT coefficients.
set -eu
cd "$(dirname "$0")"
src=../conformance/jpeg
ari() { # name, source, jpegtran options...
    name=$1 source=$2
    shift 2
    jpegtran -copy all -arithmetic "$@" "$src/$source" > "$name.ari.jpg"
    jpegtran -copy all -optimize "$name.ari.jpg" > "$name.huffman.jpg"
}
ari peacock-420 peacock.default.jpeg
ari peacock-1x3 peacock.s1x3.jpeg
ari peacock-422-progressive peacock.s2x1-422.jpeg -progressive
ari peacock-420-restart peacock.default.jpeg -restart 1
ari peacock-420-progressive-restart peacock.default.jpeg -progressive -restart 1
ari peacock-420-per-component peacock.default.jpeg -scans per-component.txt
ari grey-2x2 grayscale_16x24_sampling2x2.jpg
ari grey-progressive grayscale_16x24_sampling2x2.jpg -progressive
ari cmyk jpg-cmyk-1.jpg
ari cmyk-progressive jpg-cmyk-1.jpg -progressive
jpegtran -copy all -optimize "$src/testimgari.jpg" > testimgari.huffman.jpg
