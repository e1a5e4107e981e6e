/** A sub profile holding this group may change the groups of every profile of its subject. */
export const ADMIN_SUBJECT_GROUP = 'admin:subject';

/** Upper bound of a profile's groups, so one document cannot grow without limit. */
export const MAX_GROUPS = 100;

/** Group names, clientIds and accountIds: 1–128 characters, no whitespace or control characters. */
export const PROFILE_NAME_PATTERN = /^[^\s\p{Cc}]{1,128}$/u;
export const PROFILE_NAME_RULE = '1-128 characters without whitespace or control characters';

/** The same, or '' (a target of clientId='' and accountId='' is the root profile). */
export const PROFILE_TARGET_PATTERN = /^[^\s\p{Cc}]{0,128}$/u;
