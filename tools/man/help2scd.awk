# help2scd.awk - a bfi command's --help, read on standard input, as an
# scdoc page, so that the manual says what the program says, always:
#   awk -v page=bfi-build -v section=1 -v summary="..." -f help2scd.awk
# The help's shape, which every bfi command's follows:
#   "Usage: ..." and the lines indented under it      -> SYNOPSIS
#   paragraphs of text                                 -> DESCRIPTION, reflowed
#   indented lines that are not options (tables)       -> literal blocks
#   "Options:" (or "Options of its own:")              -> OPTIONS
#   an option line, "  -o, --output SNAP   text" or
#   "      --kmer K   text", and the lines under it    -> a definition
#   "Exit status: ..." to the end of its paragraph     -> EXIT STATUS
# Text is escaped for scdoc: \, * and _ lose their meaning.

function esc(s) {
	gsub(/\\/, "\\\\\\\\", s)
	gsub(/\*/, "\\*", s)
	gsub(/_/, "\\_", s)
	return s
}
function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}
function flush_para() {
	if (para != "") {
		print esc(para)
		print ""
		para = ""
	}
}
function flush_lit() {
	if (nlit) {
		print "```"
		for (i = 1; i <= nlit; i++)
			print lit[i]
		print "```"
		print ""
		nlit = 0
	}
}
function flush_opt(    k) {
	if (opt != "") {
		print opt
		for (k = 1; k <= nparts; k++) {
			if (ptype[k] == "lit") {
				print "\t```"
				print ptext[k]
				print "\t```"
			} else {
				print "\t" esc(ptext[k])
			}
		}
		print ""
		opt = ""
		nparts = 0
	}
}
# more of the current option's text: a table line (runs of two spaces
# inside) is kept as it is, other lines run on as one paragraph
function opt_more(t) {
	if (t ~ /[^ ]  +[^ ]/) {
		if (nparts && ptype[nparts] == "lit")
			ptext[nparts] = ptext[nparts] "\n\t" t
		else {
			ptype[++nparts] = "lit"
			ptext[nparts] = "\t" t
		}
	} else if (nparts && ptype[nparts] == "text") {
		ptext[nparts] = ptext[nparts] " " t
	} else {
		ptype[++nparts] = "text"
		ptext[nparts] = t
	}
}
function flush_all() {
	flush_opt()
	flush_para()
	flush_lit()
}
function heading(h) {
	flush_all()
	print "# " h
	print ""
}
# "-o, --output SNAP" -> *-o, --output* _SNAP_
function optspec(s,    n, parts, out, i, w) {
	n = split(s, parts, / /)
	out = ""
	for (i = 1; i <= n; i++) {
		w = parts[i]
		if (w == "")
			continue
		if (w ~ /^-/)
			out = out (out == "" ? "" : " ") "*" esc(w) "*"
		else
			out = out " _" esc(w) "_"
	}
	return out
}

BEGIN {
	print page "(" section ")"
	print ""
	print "# NAME"
	print ""
	name = page
	sub(/-/, " ", name)
	print esc(name) " - " esc(summary)
	print ""
	state = "start"
	optcol = 0
}

# the usage lines
state == "start" && /^Usage: / {
	print "# SYNOPSIS"
	print ""
	u = $0
	sub(/^Usage: +/, "", u)
	syn[++nsyn] = u
	state = "usage"
	next
}
state == "usage" && /^ +[^ ]/ {
	syn[++nsyn] = trim($0)
	next
}
state == "usage" {
	for (i = 1; i <= nsyn; i++)
		print esc(syn[i]) (i < nsyn ? "++" : "")
	print ""
	print "# DESCRIPTION"
	print ""
	state = "body"
}

# a blank line ends whatever was being gathered
/^[ \t]*$/ {
	flush_all()
	if (state == "exit")
		state = "body"
	next
}

/^Options( of its own)?:$/ {
	heading("OPTIONS")
	next
}

/^Exit status:/ {
	heading("EXIT STATUS")
	t = $0
	sub(/^Exit status: */, "", t)
	para = t
	state = "exit"
	next
}

# an option: 2 spaces and a short option, or 6 spaces and a long one; its
# text starts at the first run of two spaces after the option's words
/^  -[A-Za-z0-9], --[A-Za-z]/ || /^  -[A-Za-z0-9] / || /^      --[A-Za-z]/ {
	flush_all()
	line = $0
	sub(/^ +/, "", line)
	spec = line
	desc = ""
	if (match(line, /   *[^ ]/) && RSTART > 1) {
		spec = substr(line, 1, RSTART - 1)
		desc = substr(line, RSTART + RLENGTH - 1)
	}
	opt = optspec(trim(spec))
	nparts = 0
	if (trim(desc) != "")
		opt_more(trim(desc))
	next
}

# under an option: its text goes on
opt != "" && /^       +[^ ]/ {
	opt_more(trim($0))
	next
}

# other indented lines: a table, a list or an example, kept as it is; or
# the indented run-on of a paragraph, which runs on
/^ +[^ ]/ {
	flush_opt()
	t = trim($0)
	if (nlit || t ~ /[^ ]  +[^ ]/ || t ~ /^(bfi |- )/ || para == "") {
		flush_para()
		lit[++nlit] = $0
	} else {
		para = para " " t
	}
	next
}

# text
{
	flush_opt()
	flush_lit()
	if (state == "exit") {
		para = para " " $0
		next
	}
	para = para (para == "" ? "" : " ") $0
}

END {
	if (state == "usage") {
		for (i = 1; i <= nsyn; i++)
			print esc(syn[i]) (i < nsyn ? "++" : "")
		print ""
	}
	flush_all()
}
