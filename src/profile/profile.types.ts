/** Free JSON values allowed in settings and plan metadata: object, string, integer or boolean. */
export type SettingsValue = string | number | boolean | { [key: string]: SettingsValue };

export interface Plan {
  planName: string;
  since: Date;
  until: Date;
  metadata: Record<string, SettingsValue>;
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
}
