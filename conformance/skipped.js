// Fails a conformance leg whose extension scenarios returned a SKIPPED
// check: the suite skips an extension's checks when the extension is not
// declared (or not exercised), so a skip would hide a gap. The leg's
// baseline may allow one with a line
//   # skipped: <scenario> <reason>
// (the suite's own skip of a scenario it has not finished); an allowance
// whose scenario ran without a skip is stale and fails the leg too.
//
//   node skipped.js <out-dir> <baseline.yml> <extension scenario>...
// Prints one line per violation; exits 1 when there is any.
"use strict";
const fs = require("fs");
const path = require("path");
const [outDir, baseline, ...ext] = process.argv.slice(2);
const extension = new Set(ext);
const allowed = new Map();
for (const line of fs.readFileSync(baseline, "utf8").split("\n")) {
  const m = line.match(/^#\s*skipped:\s*(\S+)\s*(.*)$/);
  if (m) allowed.set(m[1], m[2]);
}
const stamp = /-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/;
const bad = [];
const skippedSeen = new Set();
for (const dir of fs.existsSync(outDir) ? fs.readdirSync(outDir) : []) {
  let scenario = dir.replace(stamp, "");
  if (!extension.has(scenario)) scenario = scenario.replace(/^server-/, "");
  if (!extension.has(scenario)) continue;
  const file = path.join(outDir, dir, "checks.json");
  if (!fs.existsSync(file)) continue;
  const skipped = JSON.parse(fs.readFileSync(file, "utf8")).filter((c) => c.status === "SKIPPED");
  if (skipped.length === 0) {
    if (allowed.has(scenario)) bad.push(`${scenario}: allowed to skip in ${path.basename(baseline)} but skipped nothing (stale entry)`);
    continue;
  }
  skippedSeen.add(scenario);
  if (allowed.has(scenario)) continue;
  for (const c of skipped) bad.push(`${scenario} › ${c.id}: SKIPPED: ${(c.errorMessage || "").slice(0, 200)}`);
}
for (const line of bad) console.log(line);
process.exit(bad.length ? 1 : 0);
