# Instructions a byte against mean line length (harness/linelength.sh), both axes logarithmic:
# per-line overhead makes a curve fall as 1/length until the bytes' own cost, its floor, is reached.
# Called with -e setting:
#   data  data file: a block per command, its first line the title in quotes, then "bytes-a-line
#         instructions-a-byte" lines; blocks apart by two blank lines (report.py linelength)
#   out   the SVG to write
set terminal svg size 900,650 dynamic font 'sans,11'
set output out
set title 'Instructions a byte of input against mean line length (cachegrind, running)'
set xlabel 'mean line length, bytes (newline included)'
set ylabel 'instructions a byte'
set logscale x 2
set logscale y 10
# report.py draws a count under 0.1 (cat's) on this floor.
set yrange [0.1:*]
set xrange [7:350]
set grid
set key outside below maxrows 3
# Past the eight colours of a cycle, dashed: nine or more commands stay apart.
plot for [i=0:*] data index i using 1:2 with linespoints linewidth 2 pointtype 7 \
    dashtype 1 + (i >= 8) title columnheader(1)
