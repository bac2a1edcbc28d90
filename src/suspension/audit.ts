/** Placeholder of the audit API agreed with the ops-core branch; replaced by theirs at merge. */
export interface Principal {
  id: string;
  name?: string;
}
export interface ResolveOptions {
  by?: Principal;
  comment?: string;
}
