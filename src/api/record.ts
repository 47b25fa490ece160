import type {FIELD_RULES, OPTION_RULES} from './spec.js'

/**
 * The special-financing record (spec section 2) as a TypeScript type, for programs that use sfl as a
 * library. Written from the spec's field tables: a `?` type may be null; the fields whose presence the
 * spec leaves open may be absent; an option object is absent without the option (spec 2.2 rule 2, 2.3
 * rule 1) and null when the property has no such data (rule 3, rule 2). Records are checked against the
 * same rules (src/api/spec.ts FIELD_RULES, src/pipeline/checks.ts) before a program sees them: a record
 * that breaks them comes with its problems. A newer service may send more fields: they are kept.
 */
export interface SpecialFinancingRecord {
  /** Five-digit county code (spec 2.1, varchar 5). */
  Fips: string
  /** The service's own unique property identifier (bigint, size 11): the most precise lookup. */
  ServicePropertyID: number
  /** Assessor's parcel number assigned by the county (varchar 45). */
  APN: string
  /** Full street address (varchar 100). */
  CompleteStreetAddress: string
  /** Postal-standardized street address (varchar 100). */
  StandardizeStreetAddress: string
  City: string
  /** Two-letter state abbreviation. */
  State: string
  /** Five-digit ZIP code. */
  Zip: string
  /** Census tract code (presence not shown in the spec: may be absent or null). */
  Tract?: string | null
  StateFips?: string | null
  CountyFips?: string | null
  /** Metropolitan statistical area code. */
  MSACode?: string | null
  /** Automated valuation value. */
  FinalValue: number
  /** High end of the valuation range. */
  HighValue: number
  /** Low end of the valuation range. */
  LowValue: number
  /** Valuation confidence, 0 to 100 (spec 8.5). */
  ConfidenceScore: number
  /** Standard deviation of the valuation estimate (the spec gives it no unit). */
  StandardDeviation: number
  /** Date of valuation, YYYY-MM-DDTHH:MM:SS. */
  ValuationDate: string
  /** Community Reinvestment Act level: Low, Middle, Moderate, Upper or Not Available. */
  CRAEligible: 'Low' | 'Middle' | 'Moderate' | 'Upper' | 'Not Available'
  /** Within FHA loan limits and an FHA-eligible property type: the service's verdict. */
  FHAEligible: boolean
  /** Maximum FHA loan amount for the property's county. */
  FHALoanLimit: number
  /** In an FHA-approved condominium project; null when not applicable. The service's verdict. */
  FHACondoEligible: boolean | null
  FHAOwnerOccupancyViolation?: string | null
  FHAOwnerOccupancyPercentage?: string | null
  FHAConcentration?: string | null
  FHAConcentrationViolation?: string | null
  /** Expiration of the FHA condo project approval. */
  FHAExpirationDate?: string | null
  /** In a government-approved USDA rural area. */
  USDAAreaEligible: boolean | null
  /** Address and property type are VA loan-limit eligible. */
  VAEligible: boolean | null
  /** The property has an assumable loan attached. */
  Assumable: boolean | null
  /** Census tract income level classification. */
  TractIncomeLevel: string
  /** Minority population percentage of the census tract. */
  TractMinorityPopulationPercent: number
  /** Spec 2.2: absent without the option; null when the property has no assumable first mortgage. */
  AssumableMortgage?: AssumableMortgage | null
  /** Spec 2.3: absent without the option; null when not a condo or no FHA project data exists. */
  FHACondoEligibility?: FhaCondoEligibility | null
  /** A field a newer service sends that the spec does not name. */
  [field: string]: unknown
}

/** Spec 2.2, the Assumable Mortgage option. */
export interface AssumableMortgage {
  /** FHA, VA or USDA (rule 1: these first mortgages are the assumable ones). */
  LoanType: 'FHA' | 'VA' | 'USDA'
  /** FIX (fixed) or ADJ (adjustable). */
  FinancingType: 'FIX' | 'ADJ'
  Lender: string
  OriginalLoanAmount: number
  /** YYYY-MM-DD. */
  RecordingDate: string
  TermMonths: number
  /** YYYY-MM-DD. */
  LoanDueDate: string
  RemainingYears: number
  EstimatedLoanBalance: number
  /** Percent. */
  EstimatedInterestRate: number
  EstimatedMonthlyPayment: number
  /** Balance / FinalValue × 100, one decimal. */
  EstimatedLTV: number
  /** FinalValue minus the balance: the gap a buyer covers in cash or secondary financing. */
  EstimatedEquity: number
  IsRefinance: boolean
  SecondMortgageBalance: number | null
  SecondMortgageInterestRate: number | null
  [field: string]: unknown
}

/** Spec 2.3, the FHA Condo Eligibility option: the measurements behind FHACondoEligible (rule 4). */
export interface FhaCondoEligibility {
  ApprovalStatus: 'Approved' | 'Caution' | 'Not Approved' | 'Unknown'
  EligibilityStatus: 'Eligible' | 'Caution' | 'New Construction' | 'Ineligible' | 'Eligible For Review'
  CondoName: string
  CondoID: string
  TotalUnits: number
  /** Percent; the required minimum is 35. */
  OwnerOccupancyPercentage: number
  OwnerOccupancyViolation: boolean
  /** Percent. */
  FHAConcentration: number
  FHAConcentrationViolation: boolean
  /** YYYY-MM-DD. */
  ExpirationDate: string
  /** YYYY-MM-DD. */
  LastUpdated: string
  [field: string]: unknown
}

// The types name exactly the rules' fields (a compile-time check: one home of the field list).
type Named<T> = Exclude<keyof {[K in keyof T as string extends K ? never : K]: 1}, number>
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const recordFields: Same<
  Named<SpecialFinancingRecord>,
  keyof typeof FIELD_RULES | 'AssumableMortgage' | 'FHACondoEligibility'
> = true
const assumableFields: Same<Named<AssumableMortgage>, keyof (typeof OPTION_RULES)['AssumableMortgage']> = true
const condoFields: Same<Named<FhaCondoEligibility>, keyof (typeof OPTION_RULES)['FHACondoEligibility']> = true
void recordFields
void assumableFields
void condoFields
