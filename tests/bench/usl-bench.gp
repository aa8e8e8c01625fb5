# tests/bench/usl-bench.gp - plots usl-bench's CSV: ns per operation vs n.
#   gnuplot -e "datafile='out/usl-bench.csv'; outfile='out/usl-bench.png'" usl-bench.gp
if (!exists("datafile")) datafile = 'usl-bench.csv'
if (!exists("outfile")) outfile = 'usl-bench.png'

set terminal png size 1100,750
set output outfile
set datafile separator ','
set key autotitle columnhead
set logscale xy
set xrange [700:140000]
set grid xtics ytics mxtics mytics
set key outside right top
set xlabel 'timers armed (n)'
set ylabel 'ns per operation'
set title 'usl timer set (rbtree, filled marks) vs sorted doubly linked list (open marks)'

plot datafile using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'rbtree arm', \
     ''       using 1:5 with linespoints lw 2 pt 5 lc rgb '#2ca02c' title 'rbtree rearm', \
     ''       using 1:3 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'rbtree cancel', \
     ''       using 1:4 with linespoints lw 2 pt 13 lc rgb '#17becf' title 'rbtree first', \
     ''       using 1:6 with linespoints lw 1 pt 6 lc rgb '#1f77b4' title 'list arm', \
     ''       using 1:9 with linespoints lw 1 pt 4 lc rgb '#2ca02c' title 'list rearm', \
     ''       using 1:7 with linespoints lw 1 pt 8 lc rgb '#9467bd' title 'list cancel', \
     ''       using 1:8 with linespoints lw 1 pt 12 lc rgb '#17becf' title 'list first'
