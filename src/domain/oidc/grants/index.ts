export { detailCovers, maxCoverageDepth, requestCovered, type GrantedRights } from "./coverage.ts";
export { alreadyGranted, applyGrantAction, mergeGrantContent, type GrantContent } from "./management.ts";
