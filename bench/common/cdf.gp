# SPDX-License-Identifier: MIT
#
# cdf.gp: one variant's foreground read-latency CDF for a run's page under docs/bench/, called by
# bench/rocksdb/report.py as
#   gnuplot -e "out='x.svg'; heading='...'; files='a.dat b.dat'; labels='a b'; refs=N" cdf.gp
# and by examples/demo/run-demo, which also sets xlab (the x axis's label).
# Each .dat file has two columns: latency bound in µs and the fraction of reads at or under
# it. The y axis is stretched towards the tail (-log10 of the fraction above), because the
# tail is what the variants differ in; a plain 0..1 axis would show them all as one line.
# The first `refs` files are references (alone, untagged) and are drawn grey and dashed.

set terminal svg size 720,420 dynamic noenhanced font "sans,11" background "white"
set output out
set title heading
set logscale x 10
set xrange [20:1000000]
set format x "%.0s%c"
if (!exists("xlab")) xlab = "read latency (µs, log scale), db_bench's histogram"
set xlabel xlab
set ylabel "percentile of reads"
set yrange [0:4]
set ytics ("0" 0, "50" 0.30103, "90" 1, "99" 2, "99.9" 3, "99.99" 4)
set grid xtics ytics mxtics
set key top left box opaque
tail(f) = (f < 0.99999) ? -log10(1 - f) : 1/0
n = words(files)
colors = "#9a9a9a #4a4a4a #d62728 #1f77b4 #2ca02c #9467bd #ff7f0e"
plot for [i=1:n] word(files, i) using 1:(tail($2)) with steps \
    lw (i <= refs ? 1.5 : 2) dashtype 1+(i <= refs) \
    linecolor rgb word(colors, i) title word(labels, i)
