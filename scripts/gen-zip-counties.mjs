#!/usr/bin/env node
// Generates src/address/zip-counties.txt, the compact ZIP-to-county table that lets `sfl lookup
// --address "..., CA 95838"` find the county without --county or --fips (docs/lookup.md, "A ZIP is enough").
//
// Source: US Census Bureau, "2010 ZIP Code Tabulation Area (ZCTA) to County Relationship File"
// (zcta_county_rel_10.txt, comma-separated, one row per ZCTA and county part; public domain, a work of the
// US government). Read as published, or as the CC0 copy in the R package jjchern/zcta
// (data/zcta_county_rel_10.rda, written back to the Census layout with `write.csv`). Kept per row: ZCTA5,
// GEOID (the county) and ZHUPCT, the share of the ZCTA's housing units in that county part (the nearest
// public figure to "the share of the ZIP's addresses").
//
// What the table says, and what it cannot:
// - a ZCTA is the Census Bureau's area for a ZIP code, not the ZIP itself: PO-box-only ZIPs and ZIPs newer
//   than 2010 are not in it (sfl then asks for the county);
// - counties renamed or merged since 2010 are carried to their current code (RENAMED below); counties that
//   were split or replaced since 2010 (Alaska's Valdez-Cordova, Connecticut's counties, replaced in 2022 by
//   planning regions that the 2010 file does not know) are left out, with their ZIPs, so sfl never names a
//   county from a guess;
//
// Format: two strings, read side by side, one entry a ZIP in ascending order (about 33,000):
// - ZIPS: each ZIP as its difference from the one before (the first from 0), one character of ALPHABET when
//   it is 1-63, else `~` and the five digits of the ZIP;
// - COUNTIES: each ZIP's counties, largest share of its housing units first, joined by `+`; a county is one
//   character, its place (ALPHABET) in the list of counties already named in entries of the same 3-digit
//   ZIP prefix, or `!` and its five-digit code the first time (which adds it to that list). Counties of one
//   ZIP prefix repeat, so most entries are one character: about 39 KB after gzip, against 90 KB for lines
//   of codes and shares (the package has a 1 MB ceiling). Shares are not kept, only their order: a county
//   part under 10% of the ZIP's housing units is left out (a sliver along a boundary: 10% rather than
//   less saves 2.5 KB), unless it is the ZIP's largest; a ZCTA without housing units (no homes to look up)
//   is left out whole.
//
// Rerun: node scripts/gen-zip-counties.mjs path/to/zcta_county_rel_10.txt [out.ts]
// (test/address/zip-counties.test.ts runs it on test/fixtures/zcta-county-rel-10-sample.txt, rows of the source)
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {GONE, RENAMED, readZctaFile} from './census-2010-counties.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const source = process.argv[2]
const OUT = process.argv[3] ?? join(ROOT, 'src', 'address', 'zip-counties.txt')

const {col, rows} = readZctaFile('gen-zip-counties', source)
const [ZCTA, GEOID, ZHU, ZHUPCT] = ['ZCTA5', 'GEOID', 'ZHU', 'ZHUPCT'].map(col)

/** zip → [{fips, share}] */
const zips = new Map()
const dropped = new Set()
const noHomes = new Set()
for (const [f, line] of rows) {
  const zip = f[ZCTA]
  const geoid = f[GEOID]
  if (!/^\d{5}$/.test(zip) || !/^\d{5}$/.test(geoid))
    throw new Error(`gen-zip-counties: unexpected row: ${line}`)
  if (GONE.has(geoid)) {
    dropped.add(zip)
    continue
  }
  // a ZCTA without housing units has no homes to look up (a campus, an airport, a PO-box area)
  if (!(Number(f[ZHU]) > 0)) {
    noHomes.add(zip)
    continue
  }
  const share = Number(f[ZHUPCT])
  if (!Number.isFinite(share)) throw new Error(`gen-zip-counties: no share in row: ${line}`)
  const list = zips.get(zip) ?? []
  const fips = RENAMED.get(geoid) ?? geoid
  // Bedford city's part of a ZIP is Bedford County's now: one part, the shares added
  const same = list.find((p) => p.fips === fips)
  if (same) same.share += share
  else list.push({fips, share})
  zips.set(zip, list)
}
// a ZIP with a part in a county that is gone is left out whole: its other shares would mislead
for (const zip of dropped) zips.delete(zip)

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_'
let zipsText = ''
let countiesText = ''
let prevZip = 0
const named = new Map() // ZIP prefix → counties named so far
const written = []
for (const zip of [...zips.keys()].sort()) {
  const delta = Number(zip) - prevZip
  zipsText += delta >= 1 && delta < ALPHABET.length ? ALPHABET[delta] : `~${zip}`
  prevZip = Number(zip)
  const parts = zips
    .get(zip)
    .sort((a, b) => b.share - a.share || a.fips.localeCompare(b.fips))
    .filter((p, i) => i === 0 || p.share >= 10)
  const list = named.get(zip.slice(0, 3)) ?? []
  named.set(zip.slice(0, 3), list)
  countiesText += parts
    .map(({fips}) => {
      const at = list.indexOf(fips)
      if (at >= 0 && at < ALPHABET.length) return ALPHABET[at]
      list.push(fips)
      return `!${fips}`
    })
    .join('+')
  written.push(zip)
}

// a data file, not a module: the build copies it to dist/ once, and the CLI, its lookup fast path and the
// library read it from there when a ZIP must name a county (one copy in the package, none in a bundle)
const text = `# Generated by scripts/gen-zip-counties.mjs: do not edit. ${written.length} ZIP codes (2010 ZCTAs).
# Source: US Census Bureau, 2010 ZCTA to County Relationship File (zcta_county_rel_10.txt), public domain;
# per ZIP: its counties, the largest share of its housing units (ZHUPCT) first, parts under 10% left out.
# Lines: the alphabet, the ZIPs, the counties (the format is described in scripts/gen-zip-counties.mjs).
${ALPHABET}
${zipsText}
${countiesText}
`
writeFileSync(OUT, text)
console.log(
  `gen-zip-counties: wrote ${written.length} ZIP codes to ${OUT} (${dropped.size} left out: counties split since 2010; ${noHomes.size}: no housing units)`,
)
