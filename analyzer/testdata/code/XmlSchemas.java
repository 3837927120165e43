package app;

import javax.xml.validation.Schema;
import javax.xml.validation.Validator;

// setSchema on XML APIs is not JDBC's: no findings in this file.
class XmlSchemas {
    void validate(Validator validator, Schema schema, java.io.File f) {
        validator.setSchema(schema);
        f.setReadOnly();
        log.info("connect with postgres://db/app?options=-c%20search_path%3Dx");
    }
}
