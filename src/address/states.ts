/**
 * State and territory names and their two-letter abbreviations, as USPS Publication 28 Appendix B lists
 * them (the 50 states, DC and the territories that have counties in the shipped table). Used where a
 * person types a state's name: the tail of an address ("sacramento california 95838") and `--county
 * "Yolo County, California"`. Pure.
 */
const NAMES = `AL ALABAMA | AK ALASKA | AS AMERICAN SAMOA | AZ ARIZONA | AR ARKANSAS | CA CALIFORNIA | CO COLORADO
CT CONNECTICUT | DE DELAWARE | DC DISTRICT OF COLUMBIA | FL FLORIDA | GA GEORGIA | GU GUAM | HI HAWAII
ID IDAHO | IL ILLINOIS | IN INDIANA | IA IOWA | KS KANSAS | KY KENTUCKY | LA LOUISIANA | ME MAINE
MD MARYLAND | MA MASSACHUSETTS | MI MICHIGAN | MN MINNESOTA | MS MISSISSIPPI | MO MISSOURI | MT MONTANA
NE NEBRASKA | NV NEVADA | NH NEW HAMPSHIRE | NJ NEW JERSEY | NM NEW MEXICO | NY NEW YORK | NC NORTH CAROLINA
ND NORTH DAKOTA | MP NORTHERN MARIANA ISLANDS | OH OHIO | OK OKLAHOMA | OR OREGON | PA PENNSYLVANIA
PR PUERTO RICO | RI RHODE ISLAND | SC SOUTH CAROLINA | SD SOUTH DAKOTA | TN TENNESSEE | TX TEXAS | UT UTAH
VT VERMONT | VI VIRGIN ISLANDS | VA VIRGINIA | WA WASHINGTON | WV WEST VIRGINIA | WI WISCONSIN | WY WYOMING`

/** "CALIFORNIA" → "CA", "NEW YORK" → "NY" (names upper case, words single-spaced). */
export const STATE_BY_NAME: ReadonlyMap<string, string> = new Map(
  NAMES.split(/[|\n]/).map((entry) => {
    const [code, ...name] = entry.trim().split(/\s+/)
    return [name.join(' '), code!] as const
  }),
)

/** The two-letter codes: "CA", "DC", "PR"... */
export const STATE_CODES: ReadonlySet<string> = new Set(STATE_BY_NAME.values())

/** Most words in a state's name ("NORTHERN MARIANA ISLANDS"): how far back a name match looks. */
const MAX_NAME_WORDS = Math.max(...[...STATE_BY_NAME.keys()].map((n) => n.split(' ').length))

/**
 * The state at the end of `words` (upper-case tokens): a two-letter code, or a name of one to three words,
 * the longest that fits ("WEST VIRGINIA" before "VIRGINIA"). Returns the code, how many words it took and
 * whether it was spelled out; undefined when the last words name no state.
 *
 * @example stateAtEnd(['SACRAMENTO', 'CALIFORNIA']) // {code: 'CA', words: 1, spelled: true}
 */
export function stateAtEnd(
  words: readonly string[],
): {code: string; words: number; spelled: boolean} | undefined {
  for (let n = Math.min(MAX_NAME_WORDS, words.length); n >= 1; n--) {
    const code = STATE_BY_NAME.get(words.slice(words.length - n).join(' '))
    if (code) return {code, words: n, spelled: true}
  }
  const last = words.at(-1)
  if (last !== undefined && STATE_CODES.has(last)) return {code: last, words: 1, spelled: false}
  return undefined
}

/**
 * The older abbreviations of state names people still write ("Sacramento, Calif", "Dade County, Fla"),
 * as the US Government Publishing Office Style Manual and the AP stylebook list them, dots and spaces
 * removed ("N.Y." → "NY" is a code already). Read in county names only (`--county`): at the end of an
 * address some of them are also words of a city.
 */
const TRADITIONAL = `AL ALA | AZ ARIZ | AR ARK | CA CAL CALIF | CO COLO | CT CONN | DE DEL | FL FLA | IL ILL | IN IND
KS KAN KANS | MA MASS | MI MICH | MN MINN | MS MISS | MO | MT MONT | NE NEB NEBR | NV NEV | OK OKLA | OR ORE OREG
PA PENN PENNA | SD SDAK | ND NDAK | TN TENN | TX TEX | VT | WA WASH | WV WVA | WI WIS WISC | WY WYO`

/** "CALIF" → "CA", "PENN" → "PA" (upper case, dots removed). */
export const STATE_BY_ABBREVIATION: ReadonlyMap<string, string> = new Map(
  TRADITIONAL.split(/[|\n]/).flatMap((entry) => {
    const [code, ...forms] = entry.trim().split(/\s+/)
    return forms.map((f) => [f, code!] as const)
  }),
)
