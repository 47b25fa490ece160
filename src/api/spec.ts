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

/** Spec 2.1 stated sizes of varchar fields (the maximum length of the string). */
export const STRING_SIZES: Record<string, number> = {
  Fips: 5,
  APN: 45,
  CompleteStreetAddress: 100,
  StandardizeStreetAddress: 100,
  City: 55,
  State: 2,
  Zip: 5,
  Tract: 6,
  StateFips: 2,
  CountyFips: 3,
  MSACode: 5,
  CRAEligible: 11,
  FHAOwnerOccupancyViolation: 1,
  FHAOwnerOccupancyPercentage: 55,
  FHAConcentration: 55,
  FHAConcentrationViolation: 1,
  TractIncomeLevel: 50,
}

/** The type names spec section 2 states for its fields (`boolean?` and `float?` are the nullable forms). */
export type SpecType = 'varchar' | 'bigint' | 'int' | 'float' | 'boolean' | 'date' | 'datetime'

/** Spec 2.1 field types, by field name. */
export const FIELD_TYPES: Record<string, SpecType> = {
  Fips: 'varchar',
  ServicePropertyID: 'bigint',
  APN: 'varchar',
  CompleteStreetAddress: 'varchar',
  StandardizeStreetAddress: 'varchar',
  City: 'varchar',
  State: 'varchar',
  Zip: 'varchar',
  Tract: 'varchar',
  StateFips: 'varchar',
  CountyFips: 'varchar',
  MSACode: 'varchar',
  FinalValue: 'float',
  HighValue: 'float',
  LowValue: 'float',
  ConfidenceScore: 'int',
  StandardDeviation: 'float',
  ValuationDate: 'datetime',
  CRAEligible: 'varchar',
  FHAEligible: 'boolean',
  FHALoanLimit: 'float',
  FHACondoEligible: 'boolean',
  FHAOwnerOccupancyViolation: 'varchar',
  FHAOwnerOccupancyPercentage: 'varchar',
  FHAConcentration: 'varchar',
  FHAConcentrationViolation: 'varchar',
  FHAExpirationDate: 'datetime',
  USDAAreaEligible: 'boolean',
  VAEligible: 'boolean',
  Assumable: 'boolean',
  TractIncomeLevel: 'varchar',
  TractMinorityPopulationPercent: 'float',
}

/** Spec 2.2 and 2.3 field types, by option and field (the same name can differ: FHAConcentration). */
export const OPTION_FIELD_TYPES: Record<OptionName, Record<string, SpecType>> = {
  AssumableMortgage: {
    LoanType: 'varchar',
    FinancingType: 'varchar',
    Lender: 'varchar',
    OriginalLoanAmount: 'float',
    RecordingDate: 'date',
    TermMonths: 'int',
    LoanDueDate: 'date',
    RemainingYears: 'int',
    EstimatedLoanBalance: 'float',
    EstimatedInterestRate: 'float',
    EstimatedMonthlyPayment: 'float',
    EstimatedLTV: 'float',
    EstimatedEquity: 'float',
    IsRefinance: 'boolean',
    SecondMortgageBalance: 'float',
    SecondMortgageInterestRate: 'float',
  },
  FHACondoEligibility: {
    ApprovalStatus: 'varchar',
    EligibilityStatus: 'varchar',
    CondoName: 'varchar',
    CondoID: 'varchar',
    TotalUnits: 'int',
    OwnerOccupancyPercentage: 'float',
    OwnerOccupancyViolation: 'boolean',
    FHAConcentration: 'float',
    FHAConcentrationViolation: 'boolean',
    ExpirationDate: 'date',
    LastUpdated: 'date',
  },
}
