# Throughput against a knob (harness/scaling.sh: threads or jobs; harness/sweep.sh: --batch,
# --chunk-size). Called with -e setting:
#   series   data file: a block per series, its first line the title in quotes, then "X MiB/s"
#            lines; blocks apart by two blank lines
#   refs     the same for the references (commands without the knob): two points, a flat line
#   out      the SVG to write; title, xlabel: the plot's words; logbase: the x axis's log base
set terminal svg size 900,500 dynamic font 'sans,11'
set output out
set title title
set xlabel xlabel
set ylabel 'MiB/s of input'
set logscale x logbase
set yrange [0:*]
set grid
set key outside right top
plot for [i=0:*] series index i using 1:2 with linespoints linewidth 2 pointtype 7 title columnheader(1), \
     for [i=0:*] refs index i using 1:2 with lines linecolor rgb 'gray30' dashtype i + 2 title columnheader(1)
