import * as z from 'zod/mini'
import en from 'zod/v4/locales/en.js'

import {APPROVAL_STATUSES, CRA_LEVELS, ELIGIBILITY_STATUSES, FINANCING_TYPES, LOAN_TYPES} from './spec.js'

/**
 * zod schemas written from the spec, section 2. Unknown fields pass through (`looseObject`), so a newer
 * service revision does not break the tool; a violation is reported, not hidden.
 * Loaded lazily by the commands that check records, so `sfl --version` never pays for zod. Written with
 * zod/mini, which bundles to about a tenth of classic zod (whose chunk took about 40 ms to load on Node 20)
 * and carries no messages of its own: the English locale gives the same messages classic zod prints.
 */
z.config(en())

const vchar = (size: number) => z.string().check(z.maxLength(size))
const isoDateTime = z
  .string()
  .check(z.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/, 'expected YYYY-MM-DDTHH:MM:SS'))
const isoDate = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD'))
const percent = () => z.number().check(z.minimum(0), z.maximum(100))

/** Spec 2.2, the Assumable Mortgage option. */
export const assumableMortgageSchema = z.looseObject({
  LoanType: z.enum(LOAN_TYPES), // spec 2.2 rule 1: FHA, VA or USDA (varchar 55)
  FinancingType: z.enum(FINANCING_TYPES), // varchar 10
  Lender: vchar(100),
  OriginalLoanAmount: z.number(),
  RecordingDate: isoDate,
  TermMonths: z.int(),
  LoanDueDate: isoDate,
  RemainingYears: z.int(),
  EstimatedLoanBalance: z.number(),
  EstimatedInterestRate: z.number(),
  EstimatedMonthlyPayment: z.number(),
  EstimatedLTV: z.number(),
  EstimatedEquity: z.number(),
  IsRefinance: z.boolean(),
  SecondMortgageBalance: z.nullable(z.number()),
  SecondMortgageInterestRate: z.nullable(z.number()),
})

/** Spec 2.3, the FHA Condo Eligibility option. */
export const fhaCondoEligibilitySchema = z.looseObject({
  ApprovalStatus: z.enum(APPROVAL_STATUSES), // varchar 15
  EligibilityStatus: z.enum(ELIGIBILITY_STATUSES), // varchar 25
  CondoName: vchar(100),
  CondoID: vchar(20),
  TotalUnits: z.int().check(z.nonnegative()),
  OwnerOccupancyPercentage: percent(),
  OwnerOccupancyViolation: z.boolean(),
  FHAConcentration: percent(),
  FHAConcentrationViolation: z.boolean(),
  ExpirationDate: isoDate,
  LastUpdated: isoDate,
})

/**
 * Spec 2.1, the standard package. Fields whose presence the spec leaves open ("Whether the flat FHA project
 * fields … and Tract, StateFips, CountyFips, MSACode appear in the response body: not shown") accept both
 * absence and null: a server that sends the flat FHA fields as null for a non-condo breaks no rule.
 */
export const recordSchema = z.looseObject({
  Fips: z.string().check(z.regex(/^\d{5}$/, 'expected 5 digits')),
  ServicePropertyID: z.int().check(z.positive(), z.maximum(99_999_999_999)), // bigint, size 11
  APN: vchar(45),
  CompleteStreetAddress: vchar(100),
  StandardizeStreetAddress: vchar(100),
  City: vchar(55),
  State: z.string().check(z.regex(/^[A-Z]{2}$/, 'expected a two-letter state abbreviation')),
  Zip: z.string().check(z.regex(/^\d{5}$/, 'expected a five-digit ZIP code')),
  Tract: z.nullish(vchar(6)),
  StateFips: z.nullish(vchar(2)),
  CountyFips: z.nullish(vchar(3)),
  MSACode: z.nullish(vchar(5)),
  FinalValue: z.number(),
  HighValue: z.number(),
  LowValue: z.number(),
  ConfidenceScore: z.int().check(z.minimum(0), z.maximum(100)), // spec 8.5
  StandardDeviation: z.number(),
  ValuationDate: isoDateTime,
  CRAEligible: z.enum(CRA_LEVELS), // varchar 11
  FHAEligible: z.boolean(),
  FHALoanLimit: z.number(),
  FHACondoEligible: z.nullable(z.boolean()),
  FHAOwnerOccupancyViolation: z.nullish(vchar(1)),
  FHAOwnerOccupancyPercentage: z.nullish(vchar(55)),
  FHAConcentration: z.nullish(vchar(55)),
  FHAConcentrationViolation: z.nullish(vchar(1)),
  FHAExpirationDate: z.nullish(z.union([isoDateTime, isoDate])),
  USDAAreaEligible: z.nullable(z.boolean()),
  VAEligible: z.nullable(z.boolean()),
  Assumable: z.nullable(z.boolean()),
  TractIncomeLevel: vchar(50),
  TractMinorityPopulationPercent: percent(),
  // spec 2.2 rule 2 / 2.3 rule 1: omitted without the option; rule 3 / rule 2: null without data
  AssumableMortgage: z.optional(z.nullable(assumableMortgageSchema)),
  FHACondoEligibility: z.optional(z.nullable(fhaCondoEligibilitySchema)),
})

export type SpecialFinancingRecord = z.infer<typeof recordSchema>
export type AssumableMortgage = z.infer<typeof assumableMortgageSchema>
export type FhaCondoEligibility = z.infer<typeof fhaCondoEligibilitySchema>

/** Spec 7: the error body. */
export const errorBodySchema = z.looseObject({
  status: z.literal('error'),
  code: z.int(),
  message: z.string(),
})

/** Readable list of schema problems, one per line, with the field path. */
export function describeIssues(error: z.core.$ZodError): string[] {
  // one line each: zod's messages for unions can span lines
  return error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message.replace(/\s+/g, ' ')}`)
}

/** Check one record: returns problems (empty when it conforms). Unknown fields are never a problem. */
export function checkRecord(record: unknown): string[] {
  const r = recordSchema.safeParse(record)
  return r.success ? [] : describeIssues(r.error)
}

/**
 * One line for a record that breaks the schema, naming the record and each field, or undefined when it
 * conforms: "record 30000000006: FinalValue: expected number, received string; State: …".
 */
export function schemaLine(record: unknown): string | undefined {
  const problems = checkRecord(record)
  if (problems.length === 0) return undefined
  const id = (record as {ServicePropertyID?: unknown} | null)?.ServicePropertyID
  return `record ${id === undefined ? '(no ServicePropertyID)' : String(id)} does not match the spec's schema: ${problems.join('; ')}`
}
