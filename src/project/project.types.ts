/** A project as the service sees it (the repository maps documents to this). */
export interface Project {
  id: string;
  userId: string;
  teamId: string;
  branch: string;
  name: string;
  tags: string[];
  createdAt: Date;
  updatedAt: Date;
  /** Counts the writes of the project (0 when created); with the id it makes the ETag. */
  revision: number;
}

/**
 * Who owns a project, as stored and shown: exactly one of the two is non-empty (a root user's
 * subject or a team id). The repository makes it from a Tenant (ownerFilter) and matches both
 * fields by equality.
 */
export interface ProjectOwner {
  userId: string;
  teamId: string;
}

export interface ProjectFields {
  name: string;
  tags: string[];
}

/** One page of a list, and whether another page follows in the direction of travel. */
export interface ProjectPage {
  items: Project[];
  hasMore: boolean;
}
