DROP TABLE templates;
DROP TABLE export_files;
DROP TABLE images;
