#!/bin/sh
# browser.sh — report.html as a browser renders it (issue 16): plan and compare reports opened in
# headless Chromium. A wrapper page loads each report in a 1280-pixel frame and reads its DOM:
# the recommendation section, the options table with its rows and the recommended ones marked,
# every chart as an inline SVG, and no element wider than the page outside the scrolling table
# container. A screenshot must come out too. Usage: sh tests/browser.sh bin/tierplan
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "browser: skipped: chromium is not installed (make deps installs it as root; or apt-get install chromium)"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TIERPLAN_CONFIGS="${TIERPLAN_CONFIGS:-$(pwd)/configs}"
pass=0 fail=0

check() { # name, condition text, test expression result (0/1)
	if [ "$3" -eq 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: browser: $1: $2"
	fi
}

render() { # name, tierplan arguments...
	name=$1
	shift
	if ! "$bin" "$@" --report "$work/$name" >/dev/null 2>"$work/$name.err"; then
		check "$name" "tierplan $* failed: $(head -c 200 "$work/$name.err")" 0
		return
	fi
	cat >"$work/$name.wrap.html" <<HTML
<!DOCTYPE html><html><body><div id="result">pending</div>
<iframe id="f" src="$name/report.html" style="width:1280px;height:900px;border:0"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, W = d.documentElement.clientWidth, over = 0;
  d.querySelectorAll('body *').forEach(function (e) {
    if (!e.closest('.scroll') && e.getBoundingClientRect().right > W + 1) over++;
  });
  document.getElementById('result').textContent = [
    'recommendation=' + d.querySelectorAll('#recommendation pre').length,
    'rows=' + d.querySelectorAll('#options-table tbody tr').length,
    'recommended=' + d.querySelectorAll('#options-table tr.recommended').length,
    'charts=' + d.querySelectorAll('figure.chart svg').length,
    'captions=' + d.querySelectorAll('figure.chart figcaption').length,
    'overflowing=' + over, 'end'].join(' ');
});
</script></body></html>
HTML
	out=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
		--allow-file-access-from-files --virtual-time-budget=10000 --window-size=1400,1000 \
		--dump-dom "file://$work/$name.wrap.html" 2>/dev/null |
		sed -n 's/.*<div id="result">\([^<]*\)<.*/\1/p')
	val() { echo "$out" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	check "$name" "the page did not load in the browser ($out)" "$(echo "$out" | grep -c ' end$')"
	check "$name" "no recommendation section" "$([ "$(val recommendation)" = 1 ] && echo 1 || echo 0)"
	check "$name" "no option rows" "$([ "${out:+$(val rows)}" -gt 0 ] 2>/dev/null && echo 1 || echo 0)"
	check "$name" "no recommended row marked" "$([ "$(val recommended)" -gt 0 ] 2>/dev/null && echo 1 || echo 0)"
	check "$name" "charts $(val charts) of at least 3, captions $(val captions)" \
		"$([ "$(val charts)" -ge 3 ] 2>/dev/null && [ "$(val charts)" = "$(val captions)" ] && echo 1 || echo 0)"
	check "$name" "$(val overflowing) elements wider than the page" \
		"$([ "$(val overflowing)" = 0 ] && echo 1 || echo 0)"
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --window-size=1280,2400 \
		--screenshot="$work/$name.png" "file://$work/$name/report.html" >/dev/null 2>&1
	check "$name" "no screenshot" "$([ -s "$work/$name.png" ] && echo 1 || echo 0)"
}

render plan plan --model 70b --seq 4096
render compare compare --model 8b --seq 4096
echo "browser: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
