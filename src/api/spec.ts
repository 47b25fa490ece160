/**
 * Facts of the service contract (special-financing-spec.md) as plain constants, shared by the renderers,
 * the schema and the sandbox. Kept free of imports so start-up stays cheap.
 */

/** Spec 2.1 "A full example response contains these standard fields", in that order. */
export const CORE_FIELDS = [
  'Fips',
  'ServicePropertyID',
  'APN',
  'CompleteStreetAddress',
  'StandardizeStreetAddress',
  'City',
  'State',
  'Zip',
  'FinalValue',
  'HighValue',
  'LowValue',
  'ConfidenceScore',
  'StandardDeviation',
  'ValuationDate',
  'CRAEligible',
  'FHAEligible',
  'FHALoanLimit',
  'FHACondoEligible',
  'USDAAreaEligible',
  'VAEligible',
  'Assumable',
  'TractIncomeLevel',
  'TractMinorityPopulationPercent',
] as const

/**
 * Spec 2.1 fields whose presence in the body is "not shown": placed after the core fields, in the order
 * the field table lists them, when a response carries them.
 */
export const EXTRA_FIELDS = [
  'Tract',
  'StateFips',
  'CountyFips',
  'MSACode',
  'FHAOwnerOccupancyViolation',
  'FHAOwnerOccupancyPercentage',
  'FHAConcentration',
  'FHAConcentrationViolation',
  'FHAExpirationDate',
] as const

/** Spec 2.2 field order. */
export const ASSUMABLE_FIELDS = [
  'LoanType',
  'FinancingType',
  'Lender',
  'OriginalLoanAmount',
  'RecordingDate',
  'TermMonths',
  'LoanDueDate',
  'RemainingYears',
  'EstimatedLoanBalance',
  'EstimatedInterestRate',
  'EstimatedMonthlyPayment',
  'EstimatedLTV',
  'EstimatedEquity',
  'IsRefinance',
  'SecondMortgageBalance',
  'SecondMortgageInterestRate',
] as const

/** Spec 2.3 field order. */
export const CONDO_FIELDS = [
  'ApprovalStatus',
  'EligibilityStatus',
  'CondoName',
  'CondoID',
  'TotalUnits',
  'OwnerOccupancyPercentage',
  'OwnerOccupancyViolation',
  'FHAConcentration',
  'FHAConcentrationViolation',
  'ExpirationDate',
  'LastUpdated',
] as const

/** The add-on option objects (spec 2.2, 2.3), in the order their columns come. */
export const OPTIONS = {
  AssumableMortgage: ASSUMABLE_FIELDS,
  FHACondoEligibility: CONDO_FIELDS,
} as const
export type OptionName = keyof typeof OPTIONS
export const OPTION_NAMES = Object.keys(OPTIONS) as OptionName[]

export const CRA_LEVELS = ['Low', 'Middle', 'Moderate', 'Upper', 'Not Available'] as const
export const APPROVAL_STATUSES = ['Approved', 'Caution', 'Not Approved', 'Unknown'] as const
export const ELIGIBILITY_STATUSES = [
  'Eligible',
  'Caution',
  'New Construction',
  'Ineligible',
  'Eligible For Review',
] as const
export const LOAN_TYPES = ['FHA', 'VA', 'USDA'] as const
export const FINANCING_TYPES = ['FIX', 'ADJ'] as const

/** Spec 2.3 "Meaning of EligibilityStatus values", for people who do not know the codes. */
export const ELIGIBILITY_MEANING: Record<(typeof ELIGIBILITY_STATUSES)[number], string> = {
  Eligible: 'project approved; unit eligible for FHA financing',
  Caution: 'approved, but an owner-occupancy or concentration violation may block FHA loan approval',
  'New Construction':
    'approved, but presale criteria must be verified with the developer before an FHA offer',
  Ineligible: 'not approved and not eligible',
  'Eligible For Review': 'not currently approved; may qualify through the FHA single-unit approval process',
}

/** Spec 2.3 / 8.5: the required minimum owner-occupied share of a condo project, percent. */
export const OWNER_OCCUPANCY_MIN = 35

/** The type names spec section 2 states for its fields (`boolean?` and `float?` are the nullable forms). */
export type SpecType = 'varchar' | 'bigint' | 'int' | 'float' | 'boolean' | 'date' | 'datetime'

/**
 * What the spec says one field's value may be: the one home of the record rules. The check every path runs
 * (src/pipeline/checks.ts: an export's records, a batch's answers, a single lookup) is compiled from
 * these, as are the Parquet types and the library's record type (src/api/record.ts).
 */
export interface FieldRule {
  type: SpecType
  /** `null` allowed: the spec's `?` types, and the fields whose presence it leaves open. */
  nullable?: true
  /** May be absent (spec 2.1: "Whether ... appear in the response body: not shown"). */
  optional?: true
  /** varchar size: the longest string (spec 2.1 "Size"). */
  size?: number
  /** The allowed values the spec lists (they decide; a size stated beside them is not checked). */
  values?: readonly string[]
  /** A datetime field that may also be a plain date (FHAExpirationDate: the project approval's end). */
  orDate?: true
  /** A shape the spec states: exactly so many digits, or two capital letters (a state). */
  digits?: number
  upper?: number
  min?: number
  max?: number
}

/** Spec 2.1, every standard field, in the field table's order. */
export const FIELD_RULES = {
  Fips: {type: 'varchar', size: 5, digits: 5},
  ServicePropertyID: {type: 'bigint', min: 1, max: 99_999_999_999}, // bigint of size 11
  APN: {type: 'varchar', size: 45},
  CompleteStreetAddress: {type: 'varchar', size: 100},
  StandardizeStreetAddress: {type: 'varchar', size: 100},
  City: {type: 'varchar', size: 55},
  State: {type: 'varchar', size: 2, upper: 2},
  Zip: {type: 'varchar', size: 5, digits: 5},
  // "not shown" whether these appear: absent or null both break no rule
  Tract: {type: 'varchar', size: 6, optional: true, nullable: true},
  StateFips: {type: 'varchar', size: 2, optional: true, nullable: true},
  CountyFips: {type: 'varchar', size: 3, optional: true, nullable: true},
  MSACode: {type: 'varchar', size: 5, optional: true, nullable: true},
  FinalValue: {type: 'float'},
  HighValue: {type: 'float'},
  LowValue: {type: 'float'},
  ConfidenceScore: {type: 'int', min: 0, max: 100}, // spec 8.5
  StandardDeviation: {type: 'float'},
  ValuationDate: {type: 'datetime'},
  // varchar 11, yet its allowed value "Not Available" has 13 characters: the listed values win
  CRAEligible: {type: 'varchar', size: 11, values: CRA_LEVELS},
  FHAEligible: {type: 'boolean'},
  FHALoanLimit: {type: 'float'},
  FHACondoEligible: {type: 'boolean', nullable: true},
  FHAOwnerOccupancyViolation: {type: 'varchar', size: 1, optional: true, nullable: true},
  FHAOwnerOccupancyPercentage: {type: 'varchar', size: 55, optional: true, nullable: true},
  FHAConcentration: {type: 'varchar', size: 55, optional: true, nullable: true},
  FHAConcentrationViolation: {type: 'varchar', size: 1, optional: true, nullable: true},
  FHAExpirationDate: {type: 'datetime', orDate: true, optional: true, nullable: true},
  USDAAreaEligible: {type: 'boolean', nullable: true},
  VAEligible: {type: 'boolean', nullable: true},
  Assumable: {type: 'boolean', nullable: true},
  TractIncomeLevel: {type: 'varchar', size: 50},
  TractMinorityPopulationPercent: {type: 'float', min: 0, max: 100},
} as const satisfies Record<string, FieldRule>

/** Spec 2.2 and 2.3: the members of each option object (the same name can differ: FHAConcentration). */
export const OPTION_RULES = {
  AssumableMortgage: {
    LoanType: {type: 'varchar', size: 55, values: LOAN_TYPES}, // rule 1: FHA, VA or USDA
    FinancingType: {type: 'varchar', size: 10, values: FINANCING_TYPES},
    Lender: {type: 'varchar', size: 100},
    OriginalLoanAmount: {type: 'float'},
    RecordingDate: {type: 'date'},
    TermMonths: {type: 'int'},
    LoanDueDate: {type: 'date'},
    RemainingYears: {type: 'int'},
    EstimatedLoanBalance: {type: 'float'},
    EstimatedInterestRate: {type: 'float'},
    EstimatedMonthlyPayment: {type: 'float'},
    EstimatedLTV: {type: 'float'},
    EstimatedEquity: {type: 'float'},
    IsRefinance: {type: 'boolean'},
    SecondMortgageBalance: {type: 'float', nullable: true},
    SecondMortgageInterestRate: {type: 'float', nullable: true},
  },
  FHACondoEligibility: {
    ApprovalStatus: {type: 'varchar', size: 15, values: APPROVAL_STATUSES},
    EligibilityStatus: {type: 'varchar', size: 25, values: ELIGIBILITY_STATUSES},
    CondoName: {type: 'varchar', size: 100},
    CondoID: {type: 'varchar', size: 20},
    TotalUnits: {type: 'int', min: 0},
    OwnerOccupancyPercentage: {type: 'float', min: 0, max: 100}, // percent; the minimum of 35 is a verdict, not a type rule
    OwnerOccupancyViolation: {type: 'boolean'},
    FHAConcentration: {type: 'float', min: 0, max: 100},
    FHAConcentrationViolation: {type: 'boolean'},
    ExpirationDate: {type: 'date'},
    LastUpdated: {type: 'date'},
  },
} as const satisfies Record<OptionName, Record<string, FieldRule>>

/** Spec 2.1 stated sizes of varchar fields (the maximum length of the string). */
export const STRING_SIZES: Record<string, number> = Object.fromEntries(
  Object.entries(FIELD_RULES as Record<string, FieldRule>).flatMap(([k, r]) =>
    r.size === undefined ? [] : [[k, r.size]],
  ),
)

/** Spec 2.1 field types, by field name. */
export const FIELD_TYPES: Record<string, SpecType> = Object.fromEntries(
  Object.entries(FIELD_RULES).map(([k, r]) => [k, r.type]),
)

/** Spec 2.2 and 2.3 field types, by option and field. */
export const OPTION_FIELD_TYPES: Record<OptionName, Record<string, SpecType>> = {
  AssumableMortgage: Object.fromEntries(
    Object.entries(OPTION_RULES.AssumableMortgage).map(([k, r]) => [k, r.type]),
  ),
  FHACondoEligibility: Object.fromEntries(
    Object.entries(OPTION_RULES.FHACondoEligibility).map(([k, r]) => [k, r.type]),
  ),
}
