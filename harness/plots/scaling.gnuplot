# Throughput against cores for harness/scaling.sh. Called with -e setting:
#   series  data file: a block per series (batched in each place, parallel), its first line the
#           title in quotes, then "N MiB/s" lines; blocks apart by two blank lines
#   refs    the same for the references (dd, cp, the cat chain, perl): two points, a flat line
#   out     the SVG to write; name: the data set and machine, for the title
set terminal svg size 900,500 dynamic font 'sans,11'
set output out
set title sprintf('Throughput against threads or jobs (%s)', name)
set xlabel 'N: batched --threads N, parallel -jN'
set ylabel 'MiB/s of input'
set logscale x 2
set yrange [0:*]
set grid
set key outside right top
plot for [i=0:*] series index i using 1:2 with linespoints linewidth 2 pointtype 7 title columnheader(1), \
     for [i=0:*] refs index i using 1:2 with lines linecolor rgb 'gray30' dashtype i + 2 title columnheader(1)
