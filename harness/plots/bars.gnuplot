# A bar a command for harness/throughput.sh: the median MiB/s of input, the runs' lowest and
# highest as an error bar, and with cpu=1 the CPU seconds a GiB in a second panel. Called with -e
# setting:
#   data   report.py's bars file (table or pv with --plot): a line a command, tab-separated: label,
#          median MiB/s, lowest, highest, CPU s/GiB ("-" where not known)
#   out    the SVG to write; title: the plot's title; cpu: 1 to draw the CPU panel
set terminal svg size (cpu ? 1100 : 700),520 dynamic noenhanced font 'sans,11' background rgb 'white'
set output out
set datafile separator "\t"
set style fill solid 0.5 border -1
set boxwidth 0.7
set yrange [0:*]
set xrange [-0.6:*]
set grid ytics
set xtics rotate by 30 right nomirror
set bmargin 9
set key off
if (cpu) { set multiplot layout 1,2 title title } else { set title title }
set ylabel 'MiB/s of input (median; the runs'' range)'
plot data using 0:2:xtic(1) with boxes linecolor rgb '#4477aa', \
     '' using 0:2:3:4 with yerrorbars pointtype 0 linecolor rgb 'black'
if (cpu) {
    set ylabel 'CPU s/GiB (user + system, mean)'
    unset title
    plot data using 0:5:xtic(1) with boxes linecolor rgb '#cc6677'
    unset multiplot
}
