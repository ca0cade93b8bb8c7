export { createUploadFromContent, createUploadFromPaths, getUploadJob, listUploadJobs, waitForUpload } from './jobs.js';
export type { ListUploadJobsOptions, UploadContentRequest, UploadJob, UploadPathsRequest, UploadStatus } from './jobs.js';
export { MAX_FILE_BYTES, MAX_FILES, UPLOAD_FORMATS } from './files.js';
export type { FileProblem, SkippedFile } from './files.js';
export { processUploadFile, startUploadWorkers } from './worker.js';
export type { UploadWorkers } from './worker.js';
export { UPLOAD_QUEUE } from './queue.js';
