import {z} from 'zod'

import {APPROVAL_STATUSES, CRA_LEVELS, ELIGIBILITY_STATUSES, FINANCING_TYPES, LOAN_TYPES} from './spec.js'

/**
 * zod schemas written from the spec, section 2. Unknown fields pass through (`.loose()`), so a newer
 * service revision does not break the tool; a violation is reported, not hidden.
 * Loaded lazily by the commands that check records, so `sfl --version` never pays for zod.
 */
const vchar = (size: number) => z.string().max(size)
const isoDateTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/, 'expected YYYY-MM-DDTHH:MM:SS')
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD')

/** Spec 2.2, the Assumable Mortgage option. */
export const assumableMortgageSchema = z
  .object({
    LoanType: z.enum(LOAN_TYPES), // spec 2.2 rule 1: FHA, VA or USDA (varchar 55)
    FinancingType: z.enum(FINANCING_TYPES), // varchar 10
    Lender: vchar(100),
    OriginalLoanAmount: z.number(),
    RecordingDate: isoDate,
    TermMonths: z.number().int(),
    LoanDueDate: isoDate,
    RemainingYears: z.number().int(),
    EstimatedLoanBalance: z.number(),
    EstimatedInterestRate: z.number(),
    EstimatedMonthlyPayment: z.number(),
    EstimatedLTV: z.number(),
    EstimatedEquity: z.number(),
    IsRefinance: z.boolean(),
    SecondMortgageBalance: z.number().nullable(),
    SecondMortgageInterestRate: z.number().nullable(),
  })
  .loose()

/** Spec 2.3, the FHA Condo Eligibility option. */
export const fhaCondoEligibilitySchema = z
  .object({
    ApprovalStatus: z.enum(APPROVAL_STATUSES), // varchar 15
    EligibilityStatus: z.enum(ELIGIBILITY_STATUSES), // varchar 25
    CondoName: vchar(100),
    CondoID: vchar(20),
    TotalUnits: z.number().int().nonnegative(),
    OwnerOccupancyPercentage: z.number().min(0).max(100),
    OwnerOccupancyViolation: z.boolean(),
    FHAConcentration: z.number().min(0).max(100),
    FHAConcentrationViolation: z.boolean(),
    ExpirationDate: isoDate,
    LastUpdated: isoDate,
  })
  .loose()

/**
 * Spec 2.1, the standard package. Fields whose presence the spec leaves open ("Whether the flat FHA project
 * fields … and Tract, StateFips, CountyFips, MSACode appear in the response body: not shown") accept both
 * absence and null: a server that sends the flat FHA fields as null for a non-condo breaks no rule.
 */
export const recordSchema = z
  .object({
    Fips: z.string().regex(/^\d{5}$/, 'expected 5 digits'),
    ServicePropertyID: z.number().int().positive().max(99_999_999_999), // bigint, size 11
    APN: vchar(45),
    CompleteStreetAddress: vchar(100),
    StandardizeStreetAddress: vchar(100),
    City: vchar(55),
    State: z.string().regex(/^[A-Z]{2}$/, 'expected a two-letter state abbreviation'),
    Zip: z.string().regex(/^\d{5}$/, 'expected a five-digit ZIP code'),
    Tract: vchar(6).nullish(),
    StateFips: vchar(2).nullish(),
    CountyFips: vchar(3).nullish(),
    MSACode: vchar(5).nullish(),
    FinalValue: z.number(),
    HighValue: z.number(),
    LowValue: z.number(),
    ConfidenceScore: z.number().int().min(0).max(100), // spec 8.5
    StandardDeviation: z.number(),
    ValuationDate: isoDateTime,
    CRAEligible: z.enum(CRA_LEVELS), // varchar 11
    FHAEligible: z.boolean(),
    FHALoanLimit: z.number(),
    FHACondoEligible: z.boolean().nullable(),
    FHAOwnerOccupancyViolation: vchar(1).nullish(),
    FHAOwnerOccupancyPercentage: vchar(55).nullish(),
    FHAConcentration: vchar(55).nullish(),
    FHAConcentrationViolation: vchar(1).nullish(),
    FHAExpirationDate: isoDateTime.or(isoDate).nullish(),
    USDAAreaEligible: z.boolean().nullable(),
    VAEligible: z.boolean().nullable(),
    Assumable: z.boolean().nullable(),
    TractIncomeLevel: vchar(50),
    TractMinorityPopulationPercent: z.number().min(0).max(100),
    // spec 2.2 rule 2 / 2.3 rule 1: omitted without the option; rule 3 / rule 2: null without data
    AssumableMortgage: assumableMortgageSchema.nullable().optional(),
    FHACondoEligibility: fhaCondoEligibilitySchema.nullable().optional(),
  })
  .loose()

export type SpecialFinancingRecord = z.infer<typeof recordSchema>
export type AssumableMortgage = z.infer<typeof assumableMortgageSchema>
export type FhaCondoEligibility = z.infer<typeof fhaCondoEligibilitySchema>

/** Spec 7: the error body. */
export const errorBodySchema = z
  .object({status: z.literal('error'), code: z.number().int(), message: z.string()})
  .loose()

/** Readable list of schema problems, one per line, with the field path. */
export function describeIssues(error: z.ZodError): string[] {
  // one line each: zod's messages for unions can span lines
  return error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message.replace(/\s+/g, ' ')}`)
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

/** Check one record: returns problems (empty when it conforms). Unknown fields are never a problem. */
export function checkRecord(record: unknown): string[] {
  const r = recordSchema.safeParse(record)
  return r.success ? [] : describeIssues(r.error)
}
