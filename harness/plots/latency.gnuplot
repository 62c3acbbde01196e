# Per-line latency against offered rate for harness/latency.sh: p50 and p99 side by side. Called
# with -e setting:
#   data    a block per binary and settings, its first line the label in quotes, then
#           "position rate-label p50 p99" lines; blocks apart by two blank lines
#   out     the SVG to write; rounds: how the figures were taken, for the title
set terminal svg size 1100,480 dynamic font 'sans,11'
set output out
set multiplot layout 1,2 title sprintf('Per-line latency against offered rate (%s)', rounds)
set logscale y
set grid
set key top left font 'sans,9'
set xlabel 'offered lines/s'
set ylabel 'latency, µs (log)'
set offsets 0.2, 0.2, 0, 0
set title 'p50'
plot for [i=0:*] data index i using 1:3:xtic(2) with linespoints title columnheader(1)
set title 'p99'
plot for [i=0:*] data index i using 1:4:xtic(2) with linespoints title columnheader(1)
unset multiplot
