/** A brand's licence as the admin API shows it. */
export interface BrandLicence {
  id: number;
  brandId: number;
  authority: string;
  /** ISO 3166-1 alpha-2 codes. */
  countries: string[];
  validFrom: string | null;
  validUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A country's or market's "licence required" rule as the admin API shows it. */
export interface LicenceRequirement {
  id: number;
  geoType: 'country' | 'market';
  code: string;
  countries: string[];
  authority: string | null;
  createdAt: string;
  updatedAt: string;
}
