# Each strategy's overhead against the work a line (harness/work.sh). Called with -e setting:
#   data  work.tsv: text, source, ns, strategy, lines, wall_s, cpu_s, lines_per_s,
#         cpu_ns_a_line, overhead (tab-separated, a header line)
#   out   the SVG to write
# One panel a text and source, a line a strategy (its rows picked by awk); the 0 ns points, off
# a log axis, are left out.
set terminal svg size 1200,800 dynamic font 'sans,11'
set output out
set datafile separator '\t'
set logscale x 10
set xrange [20:15000]
set yrange [0:*]
set format y '%.0f %%'
set grid
set key top right
# As harness/work.sh names them; a quoted name is one word.
strategies = 'std-baseline baseline streamer "pipeline --batch 1000" batched "batched --threads 1"'
name(i) = word(strategies, i)
rows(text, source, strategy) = sprintf("< awk -F'\\t' -v t='%s' -v s='%s' -v n='%s' '$1 == t && $2 == s && $4 == n && $3 > 0' '%s'", text, source, strategy, data)
set multiplot layout 2,2 title "Overhead: CPU a line beyond the work's own, as a share of the CPU a line"
do for [text in "logs man"] {
    do for [source in "file pipe"] {
        set title sprintf('%s, %s', text, source)
        set xlabel 'work a line (ns)'
        plot for [i=1:words(strategies)] rows(text, source, name(i)) using 3:($10 * 100) \
            with linespoints linewidth 2 pointtype 7 title name(i)
    }
}
unset multiplot
