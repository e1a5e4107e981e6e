/** Free JSON values allowed in settings and plan metadata: object, string, integer or boolean. */
export type SettingsValue = string | number | boolean | { [key: string]: SettingsValue };

export interface Plan {
  planName: string;
  since: Date;
  until: Date;
  metadata: Record<string, SettingsValue>;
}

/** A plan as the operator API hands it over; ProfileService.setPlans checks its metadata. */
export interface PlanInput {
  planName: string;
  since: Date;
  until: Date;
  /** Absent: {}. Otherwise follows the rules of settings. */
  metadata?: unknown;
}

/** A profile as the service layer sees it; root profiles have accountId = clientId = branch = ''. */
export interface Profile {
  id: string;
  subject: string;
  accountId: string;
  clientId: string;
  branch: string;
  plans: Plan[];
  avatar: string;
  email: string;
  settings: Record<string, SettingsValue>;
  metadata: Record<string, string>;
  groups: string[];
  createdAt: Date;
  updatedAt: Date;
  /** Counts the writes of the profile (0 when created); with the id it makes the ETag. */
  revision: number;
}

/** Which profile an operation acts on: without both, the caller's own (see ProfileService). */
export interface ProfileTarget {
  clientId?: string;
  accountId?: string;
}

/** PUT /profile: merge patches (RFC 7386); `null` for the whole field clears it. */
export interface ProfileUpdate {
  /** null or '' clears the avatar. */
  avatar?: string | null;
  settings?: Record<string, unknown> | null;
  metadata?: Record<string, unknown> | null;
}

/** POST /profile. */
export interface NewSubProfile {
  accountId: string;
  clientId: string;
  email: string;
  groups?: string[];
  userMetadata?: Record<string, SettingsValue>;
}
